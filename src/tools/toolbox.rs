//! [`ToolBox`]: the catalog, argument checking, dispatch, Evidence recording and availability.

use std::fmt;
use std::sync::{Arc, LazyLock};

use serde_json::{Map, Value};

use super::arguments::{InputSchema, TargetArguments, split_session};
use super::definition::ToolDefinition;
use super::outcome::{EVIDENCE_ID_FIELD, ToolError, ToolOutcome, UnknownTool, check_support};
use super::spec::{CLOSE_BINARY, OPEN_BINARY, Run, SESSION_FIELD, ToolSpec, decode, encode_result};
use super::{
    analysis, annotations, artifacts, binary, captures, code, compare, ledger, residuals,
    run_capture,
};
use crate::prompts::{BinarySession, ToolAvailability};
use crate::providers::identify;
use crate::session::{
    Cancel, ClientHandles, Observation, Operation, Session, SessionError, SessionHandle,
    SessionStore, StoreConfig, StoreError, fits_one_record,
};

/// The catalog, in `tools/list` order. A group of tools is one file with a `tools()` list; a
/// new group is one more line.
fn catalog() -> impl Iterator<Item = ToolSpec> {
    [
        binary::tools(),
        analysis::tools(),
        code::tools(),
        compare::tools(),
        ledger::tools(),
        residuals::tools(),
        annotations::tools(),
        artifacts::tools(),
        captures::tools(),
        run_capture::tools(),
    ]
    .into_iter()
    .flatten()
}

/// One tool of the catalog with what is made once per process: its input schema (with the
/// compiled validator) and its definition.
struct Tool {
    spec: ToolSpec,
    input: InputSchema,
    definition: ToolDefinition,
}

/// The catalog, built on first use: every toolbox shares the compiled validators.
static CATALOG: LazyLock<Vec<Tool>> = LazyLock::new(|| {
    catalog()
        .map(|spec| {
            let input = (spec.handler.input)();
            let definition = spec.definition(&input, |output| {
                if annotations::labels::LABELLED.contains(&spec.name) {
                    annotations::labels::attach_schema(output);
                }
            });
            Tool {
                spec,
                input,
                definition,
            }
        })
        .collect()
});

/// What the built-in native provider supports: every operation but `decompile`. With no
/// binary open, provider-backed tools are offered when this includes their operation (or a
/// companion provider declares it), since `open_binary` on a binary opens the native
/// provider. (A test checks this against the provider.)
fn native_operations() -> Vec<Operation> {
    Operation::ALL
        .into_iter()
        .filter(|&operation| operation != Operation::Decompile)
        .collect()
}

/// The tools over the binary sessions of one [`SessionStore`] (see the [module
/// documentation](super) for the catalog).
///
/// Every tool takes an optional `session` argument naming the binary session it works in; a
/// call that names none works in its client's session ([`ClientHandles`]): the one the client
/// opened or named last. [`ToolBox::call`] is a client of its own, so a library caller that
/// never names a session works as with one session.
///
/// `call` is synchronous and may wait on the provider (a name lookup can page through every
/// procedure), so async callers should run it on a blocking thread.
pub struct ToolBox {
    store: Arc<SessionStore>,
    /// The client of [`ToolBox::call`] and [`ToolBox::call_cancellable`].
    own_client: ClientHandles,
    specs: &'static [Tool],
    definitions: Vec<ToolDefinition>,
}

impl fmt::Debug for ToolBox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.specs.iter().map(|tool| tool.spec.name).collect();
        f.debug_struct("ToolBox")
            .field("store", &self.store)
            .field("tools", &names)
            .finish()
    }
}

/// How a tool uses the session it is given (or its client's session).
#[derive(Clone, Copy, PartialEq, Eq)]
enum SessionUse {
    /// `open_binary`: without `session`, opens in a new session (or in the client's session
    /// while no binary is open in it) and answers the handle.
    Opens,
    /// `close_binary`: ends the session it closes.
    Ends,
    /// Every other tool: works in the named session or the client's.
    Works,
}

fn session_use(tool: &str) -> SessionUse {
    match tool {
        OPEN_BINARY => SessionUse::Opens,
        CLOSE_BINARY => SessionUse::Ends,
        _ => SessionUse::Works,
    }
}

/// The session a call runs in, and whether it must be admitted to the store when the call
/// succeeds (a new session, made for this call).
struct Chosen {
    session: Arc<Session>,
    handle: Option<SessionHandle>,
}

impl ToolBox {
    /// The full catalog over a store holding `session`, which becomes the session of this
    /// toolbox's own client ([`ToolBox::call`]). `session` keeps its own ledger budget;
    /// sessions opened later share the store's ([`SessionStore::budget`]).
    pub fn new(session: Arc<Session>) -> ToolBox {
        let store = Arc::new(SessionStore::new(StoreConfig::default()));
        let toolbox = ToolBox::with_store(Arc::clone(&store));
        // An empty store has room for one session, and a handle failing to be made leaves the
        // toolbox without a session of its own: its first call makes one.
        if let Ok(handle) = store.admit(session) {
            toolbox.own_client.name(&handle);
        }
        toolbox
    }

    /// The full catalog over the sessions of `store`.
    pub fn with_store(store: Arc<SessionStore>) -> ToolBox {
        let specs: &'static [Tool] = &CATALOG;
        let definitions = specs.iter().map(|tool| tool.definition.clone()).collect();
        ToolBox {
            store,
            own_client: ClientHandles::new(),
            specs,
            definitions,
        }
    }

    /// The store of the sessions the tools work in.
    pub fn store(&self) -> &Arc<SessionStore> {
        &self.store
    }

    /// The session of this toolbox's own client ([`ToolBox::call`]), if it has one.
    pub fn session(&self) -> Option<Arc<Session>> {
        self.client_session(&self.own_client)
    }

    /// The handle of this toolbox's own client's session, if it has one.
    pub fn session_handle(&self) -> Option<SessionHandle> {
        self.own_client.current()
    }

    /// The open session `client` uses when a call names none.
    pub fn client_session(&self, client: &ClientHandles) -> Option<Arc<Session>> {
        let handle = client.current()?;
        self.store.get(handle.as_str()).ok()
    }

    /// The catalog in its stable order (what `tools/list` shows).
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }

    /// The definition of the tool named `name`.
    pub fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.definitions.iter().find(|d| d.name() == name)
    }

    /// Calls the tool named `name` as this toolbox's own client. An unknown name is the only
    /// `Err`; every other failure is an outcome with `isError: true` whose text says what went
    /// wrong.
    pub fn call(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<ToolOutcome, UnknownTool> {
        self.call_cancellable(name, arguments, &Cancel::never())
    }

    /// [`ToolBox::call`] with a cancellation signal: long work stops when `cancel` is set, and
    /// a call cancelled before it commits (records Evidence, opens a binary) never commits.
    ///
    /// A successful result whose JSON is over [`MAX_RESULT_BYTES`] becomes an error result
    /// that names the limit and says how to ask for less; it is checked before Evidence is
    /// recorded, so such a call records nothing.
    pub fn call_cancellable(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        cancel: &Cancel,
    ) -> Result<ToolOutcome, UnknownTool> {
        self.call_as(&self.own_client, name, arguments, cancel)
    }

    /// [`ToolBox::call_cancellable`] on behalf of `client`: a call that names no session works
    /// in `client`'s session, and the session a call opens or names becomes `client`'s.
    pub fn call_as(
        &self,
        client: &ClientHandles,
        name: &str,
        arguments: &Map<String, Value>,
        cancel: &Cancel,
    ) -> Result<ToolOutcome, UnknownTool> {
        let tool = self
            .specs
            .iter()
            .find(|tool| tool.spec.name == name)
            .ok_or_else(|| UnknownTool::new(name))?;
        Ok(match self.run_in_session(client, tool, arguments, cancel) {
            Ok((result, Some(handle))) => ToolOutcome::success(result).in_session(handle),
            Ok((result, None)) => ToolOutcome::success(result),
            Err(error) => ToolOutcome::failure(&error),
        })
    }

    /// Picks the session, runs the tool in it, and then updates the store and the client.
    fn run_in_session(
        &self,
        client: &ClientHandles,
        tool: &Tool,
        arguments: &Map<String, Value>,
        cancel: &Cancel,
    ) -> Result<(Map<String, Value>, Option<SessionHandle>), ToolError> {
        let spec = &tool.spec;
        // The one copy of the arguments a call makes: what it checks and decodes.
        let (named, arguments) = split_session(spec.name, arguments.clone())?;
        if let Run::Across { run, .. } = &spec.handler.run {
            let default = named
                .clone()
                .or_else(|| client.current().map(|handle| handle.as_str().to_owned()));
            let checked = tool.input.check(spec.name, arguments)?;
            let across = run(spec.name, &self.store, default.as_deref(), checked, cancel)?;
            return Ok((record_across(spec.name, across, cancel)?, None));
        }
        if let Run::Sessions(run) = &spec.handler.run {
            let checked = tool.input.check(spec.name, arguments)?;
            let result = run(spec.name, &self.store, client, checked)?;
            check_size(spec.name, &result)?;
            return Ok((result, None));
        }
        let usage = session_use(spec.name);
        if usage == SessionUse::Opens
            && named.is_none()
            && !client.is_unlisted()
            && let Some(handle) = self.resumable(tool, &arguments)?
        {
            let session = self.store.hold(handle.as_str())?;
            let mut result = encode_result(spec.name, &binary::resumed(&session)?)?;
            client.name(&handle);
            result.insert(SESSION_FIELD.to_owned(), handle.as_str().into());
            return Ok((result, Some(handle)));
        }
        let chosen = self.choose(client, named.as_deref(), usage, &spec.handler.run)?;
        let mut result = self.run(&chosen.session, tool, arguments, cancel)?;
        let handle = match chosen.handle {
            Some(handle) => handle,
            None if matches!(spec.handler.run, Run::Read(_)) => return Ok((result, None)),
            // The call changed a session made for it: it is open from now on.
            None => match self.store.admit(Arc::clone(&chosen.session)) {
                Ok(handle) => handle,
                Err(error) => {
                    // What the call committed to the durable store goes with the session.
                    chosen.session.discard();
                    return Err(error.into());
                }
            },
        };
        match usage {
            SessionUse::Ends => {
                self.store.end(&handle);
                client.forget(&handle);
            }
            SessionUse::Opens | SessionUse::Works => client.name(&handle),
        }
        if usage != SessionUse::Works {
            result.insert(SESSION_FIELD.to_owned(), handle.as_str().into());
        }
        Ok((result, Some(handle)))
    }

    /// The session `open_binary` resumes instead of opening its file anew: one resumed from
    /// the store serving the file at `path` (same real path and SHA-256), unless `new_session`
    /// is true. Never over HTTP, where a handle is a bearer token of the client that opened it.
    /// The file is hashed only when such a session serves its real path.
    fn resumable(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
    ) -> Result<Option<SessionHandle>, ToolError> {
        // A copy, for opening tools only: the arguments are checked again when the tool runs.
        let checked = tool.input.check(tool.spec.name, arguments.clone())?;
        if checked.get("new_session").and_then(Value::as_bool) == Some(true) {
            return Ok(None);
        }
        let Some(path) = checked.get("path").and_then(Value::as_str) else {
            return Ok(None);
        };
        let Ok(real) = std::fs::canonicalize(path) else {
            return Ok(None);
        };
        if !self.store.has_file(&real) {
            return Ok(None);
        }
        let confinement = self.store.confinement();
        Ok(identify(std::path::Path::new(path), &confinement)
            .ok()
            .and_then(|(origin, sha256)| self.store.find_file(&origin, &sha256)))
    }

    /// The session a call works in: the one it names, else its client's; `open_binary` opens
    /// in a new one unless the client's has no binary open. A new session is not in the store
    /// until the call succeeds (`handle: None`), so a failed call leaves the store as it was.
    fn choose(
        &self,
        client: &ClientHandles,
        named: Option<&str>,
        usage: SessionUse,
        run: &Run,
    ) -> Result<Chosen, ToolError> {
        if let Some(named) = named {
            let session = self.store.hold(named)?;
            let handle = self.store.handle(named);
            return Ok(Chosen { session, handle });
        }
        let current = match client.current() {
            Some(handle) => match self.store.hold(handle.as_str()) {
                Ok(session) => Some((session, handle)),
                // Closed, or ended by the idle time-out: a call naming none opens anew.
                Err(StoreError::Unknown { .. }) => None,
                Err(error) => return Err(error.into()),
            },
            None => None,
        };
        match (current, usage) {
            (Some((session, handle)), SessionUse::Works | SessionUse::Ends) => Ok(Chosen {
                session,
                handle: Some(handle),
            }),
            (Some((session, handle)), SessionUse::Opens) if !session.is_open() => Ok(Chosen {
                session,
                handle: Some(handle),
            }),
            (None, SessionUse::Ends) => Err(SessionError::NotOpen.into()),
            _ => {
                // Checked before the work (a large file), and again when it is admitted.
                let changes = !matches!(run, Run::Read(_));
                if changes && !self.store.has_room() {
                    return Err(StoreError::TooMany {
                        limit: self.store.max_sessions(),
                    }
                    .into());
                }
                Ok(Chosen {
                    session: self.store.prepare()?,
                    handle: None,
                })
            }
        }
    }

    fn run(
        &self,
        session: &Session,
        tool: &Tool,
        arguments: Map<String, Value>,
        cancel: &Cancel,
    ) -> Result<Map<String, Value>, ToolError> {
        let spec = &tool.spec;
        let checked = tool.input.check(spec.name, arguments)?;
        match &spec.handler.run {
            Run::Change(run) => {
                let result = run(spec.name, session, checked, cancel)?;
                check_size(spec.name, &result)?;
                Ok(result)
            }
            Run::Read(run) => {
                let result = run(spec.name, session, checked)?;
                check_size(spec.name, &result)?;
                Ok(result)
            }
            // Answered before a session is chosen (`run_in_session`); here on behalf of no
            // known client, which lists nothing.
            Run::Sessions(run) => {
                let result = run(spec.name, &self.store, &ClientHandles::unlisted(), checked)?;
                check_size(spec.name, &result)?;
                Ok(result)
            }
            Run::Retain(run) => {
                let given = checked.clone();
                let retained = run(spec.name, session, checked, cancel)?;
                let mut reply = retained.reply;
                check_size(spec.name, &reply)?;
                let observation = Observation::unbound(
                    spec.name,
                    Value::Object(retained.recorded_arguments.unwrap_or(given)),
                    retained.document,
                );
                cancel
                    .check()
                    .map_err(|_| ToolError::Cancelled { tool: spec.name })?;
                let record = session.record_evidence_unless(observation, cancel)?;
                reply.insert(EVIDENCE_ID_FIELD.to_owned(), record.id.to_string().into());
                Ok(reply)
            }
            // Answered before a session is chosen (`run_in_session`); here with no default
            // session, so both sides must be named.
            Run::Across { run, .. } => {
                let across = run(spec.name, &self.store, None, checked, cancel)?;
                record_across(spec.name, across, cancel)
            }
            Run::Observe { operation, run } => {
                let TargetArguments { provider, document } = decode(spec.name, checked.clone())?;
                let target = session.target(provider.as_deref(), document.as_deref())?;
                check_support(&target, *operation)?;
                let mut checked = checked;
                let (recorded, mut result) = loop {
                    // The record keeps the checked arguments; the tool decodes its own copy.
                    let recorded = checked.clone();
                    let mut result = run(spec.name, &target, checked)?;
                    if annotations::labels::LABELLED.contains(&spec.name) {
                        annotations::labels::attach(&target, &mut result);
                    }
                    let fits = check_size(spec.name, &result).and_then(|bytes| {
                        fits_one_record(spec.name, &recorded, bytes)
                            .map_err(|error| ToolError::from(SessionError::from(error)))
                    });
                    match fits {
                        Ok(()) => break (recorded, result),
                        // A page of long entries (names of thousands of characters) is
                        // asked again for half as many, until it fits: a default page never
                        // fails for being too large, and the cursor goes on from where it
                        // stops. At most nine times (500 entries down to one).
                        Err(error) => {
                            checked = recorded;
                            if !tool.input.halve_page(&mut checked) {
                                return Err(error);
                            }
                            cancel
                                .check()
                                .map_err(|_| ToolError::Cancelled { tool: spec.name })?;
                        }
                    }
                };
                let observation = target.observation(
                    spec.name,
                    Value::Object(recorded),
                    Value::Object(result.clone()),
                );
                cancel
                    .check()
                    .map_err(|_| ToolError::Cancelled { tool: spec.name })?;
                let record = session.record_evidence_unless(observation, cancel)?;
                result.insert(EVIDENCE_ID_FIELD.to_owned(), record.id.to_string().into());
                Ok(result)
            }
        }
    }

    /// The catalog tools a guided prompt may list now for this toolbox's own client's session
    /// (see [`ToolBox::availability_in`]).
    pub fn availability(&self) -> ToolAvailability {
        self.availability_in(self.session().as_deref())
    }

    /// The catalog tools a guided prompt may list for `session`: tools not backed by a provider
    /// operation always; a provider-backed tool when the current provider supports its
    /// operation (`decompile`: when any declared provider does). With no binary open (or no session), provider-backed tools count as offered
    /// when the built-in native provider supports them (what `open_binary` on a binary opens),
    /// and the availability is [`BinarySession::Closed`], so renderings say `open_binary` comes
    /// first.
    pub fn availability_in(&self, session: Option<&Session>) -> ToolAvailability {
        let providers = session.map(Session::providers).unwrap_or_default();
        let (binary, supported) = if providers.is_empty() {
            let mut supported = native_operations();
            let companions = session
                .and_then(Session::companions)
                .or_else(|| self.store.companions());
            if let Some(companions) = companions {
                supported.extend(companions.operations());
            }
            (BinarySession::Closed, supported)
        } else {
            // The current provider's operations; `decompile` wherever a declared provider has
            // a decompiler (the call names it with `provider`), since the native provider,
            // current after opening, never has one.
            let decompiler = providers
                .iter()
                .any(|p| p.operations.contains(&Operation::Decompile));
            let current = providers.into_iter().find(|p| p.current);
            let mut supported = current.map(|p| p.operations).unwrap_or_default();
            if decompiler {
                supported.push(Operation::Decompile);
            }
            let binary = if session.is_some_and(Session::binary_outside_roots) {
                BinarySession::OutsideRoots
            } else {
                BinarySession::Open
            };
            (binary, supported)
        };
        let offered = self
            .definitions
            .iter()
            .filter(|d| d.operation().is_none_or(|op| supported.contains(&op)))
            .map(ToolDefinition::name);
        ToolAvailability::new(offered, binary)
    }
}

/// Most bytes of JSON one tool result may take: the result object counted twice (the MCP
/// result carries it as `structuredContent` and as its JSON text) plus the Evidence ID.
pub const MAX_RESULT_BYTES: usize = 1 << 20;

/// Room left for the `evidence_id` field and the `CallToolResult` wrapping.
const RESULT_OVERHEAD_BYTES: usize = 1024;

/// The bytes of `result`'s JSON; an error when, as an MCP result, it would be over
/// [`MAX_RESULT_BYTES`].
fn check_size(tool: &'static str, result: &Map<String, Value>) -> Result<usize, ToolError> {
    let limit = (MAX_RESULT_BYTES - RESULT_OVERHEAD_BYTES) / 2;
    let mut counter = LimitedCounter { count: 0, limit };
    let fits = serde_json::to_writer(&mut counter, result).is_ok();
    // The text content escapes quotes and backslashes once more.
    if fits && counter.count <= limit {
        return Ok(counter.count);
    }
    Err(ToolError::ResultTooLarge {
        tool,
        limit: MAX_RESULT_BYTES,
    })
}

/// Counts bytes written, failing past `limit` so a large result is not serialized whole.
struct LimitedCounter {
    count: usize,
    limit: usize,
}

impl std::io::Write for LimitedCounter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        // Quotes and backslashes are escaped again in the text content.
        let escaped = bytes.iter().filter(|&&b| b == b'"' || b == b'\\').count();
        self.count += bytes.len() + escaped.div_ceil(2);
        if self.count > self.limit {
            return Err(std::io::Error::other("over the result limit"));
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Records what a [`Run::Across`] tool observed in the session it names, and answers its
/// reply with the Evidence ID.
fn record_across(
    tool: &'static str,
    across: super::spec::Across,
    cancel: &Cancel,
) -> Result<Map<String, Value>, ToolError> {
    let mut reply = across.reply;
    check_size(tool, &reply)?;
    cancel.check().map_err(|_| ToolError::Cancelled { tool })?;
    let record = across
        .session
        .record_evidence_unless(across.observation, cancel)?;
    reply.insert(EVIDENCE_ID_FIELD.to_owned(), record.id.to_string().into());
    Ok(reply)
}
