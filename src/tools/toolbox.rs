//! [`ToolBox`]: the catalog, argument checking, dispatch, Evidence recording and availability.

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::definition::ToolDefinition;
use super::outcome::{EVIDENCE_ID_FIELD, ToolError, ToolOutcome, UnknownTool};
use super::parameters::Arguments;
use super::spec::{Run, ToolSpec};
use super::{analysis, artifacts, binary, captures, code, ledger, residuals};
use crate::prompts::{BinarySession, ToolAvailability};
use crate::session::{Cancel, Observation, Operation, Session, Target};

/// The catalog, in `tools/list` order. A group of tools is one file with a `TOOLS` list; a
/// new group is one more line.
const CATALOG: [&[ToolSpec]; 7] = [
    binary::TOOLS,
    analysis::TOOLS,
    code::TOOLS,
    ledger::TOOLS,
    residuals::TOOLS,
    artifacts::TOOLS,
    captures::TOOLS,
];

/// What the built-in native provider supports: every operation but `decompile`. With no
/// binary open, provider-backed tools are offered when this includes their operation (or a
/// companion provider declares it), since `open_binary` on a binary opens the native
/// provider. (A test checks this against the provider.)
const NATIVE_OPERATIONS: [Operation; Operation::ALL.len() - 1] = [
    Operation::ListDocuments,
    Operation::ListProcedures,
    Operation::ProcedureInfo,
    Operation::SearchProcedures,
    Operation::ListSegments,
    Operation::SearchStrings,
    Operation::ReadBytes,
    Operation::ListImports,
    Operation::Disassemble,
    Operation::XrefsTo,
    Operation::Callers,
    Operation::Callees,
];

/// The tools of one session (see the [module documentation](super) for the catalog).
///
/// `call` is synchronous and may wait on the provider (a name lookup can page through every
/// procedure), so async callers should run it on a blocking thread.
pub struct ToolBox {
    session: Arc<Session>,
    specs: Vec<&'static ToolSpec>,
    definitions: Vec<ToolDefinition>,
}

impl fmt::Debug for ToolBox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.specs.iter().map(|spec| spec.name).collect();
        f.debug_struct("ToolBox")
            .field("session", &self.session)
            .field("tools", &names)
            .finish()
    }
}

impl ToolBox {
    /// The full catalog over `session`.
    pub fn new(session: Arc<Session>) -> ToolBox {
        let specs: Vec<&'static ToolSpec> = CATALOG.into_iter().flatten().collect();
        let definitions = specs.iter().map(|spec| spec.definition()).collect();
        ToolBox {
            session,
            specs,
            definitions,
        }
    }

    /// The session the tools work on.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// The catalog in its stable order (what `tools/list` shows).
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }

    /// The definition of the tool named `name`.
    pub fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.definitions.iter().find(|d| d.name() == name)
    }

    /// Calls the tool named `name`. An unknown name is the only `Err`; every other failure is
    /// an outcome with `isError: true` whose text says what went wrong.
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
        let spec = self
            .specs
            .iter()
            .find(|spec| spec.name == name)
            .ok_or_else(|| UnknownTool::new(name))?;
        Ok(match self.run(spec, arguments, cancel) {
            Ok(result) => ToolOutcome::success(result),
            Err(error) => ToolOutcome::failure(&error),
        })
    }

    fn run(
        &self,
        spec: &ToolSpec,
        arguments: &Map<String, Value>,
        cancel: &Cancel,
    ) -> Result<Map<String, Value>, ToolError> {
        let checked = Arguments::check(spec.name, spec.handler.parameters, arguments)?;
        match spec.handler.run {
            Run::Change(run) => {
                let result = run(&self.session, &checked, cancel)?;
                check_size(spec.name, &result)?;
                Ok(result)
            }
            Run::Read(run) => {
                let result = run(&self.session, &checked)?;
                check_size(spec.name, &result)?;
                Ok(result)
            }
            Run::Retain(run) => {
                let retained = run(&self.session, &checked, cancel)?;
                let mut reply = retained.reply;
                check_size(spec.name, &reply)?;
                let observation = Observation::unbound(
                    spec.name,
                    Value::Object(
                        retained
                            .recorded_arguments
                            .unwrap_or_else(|| arguments.clone()),
                    ),
                    retained.document,
                );
                cancel
                    .check()
                    .map_err(|_| ToolError::Cancelled { tool: spec.name })?;
                let record = self.session.record_evidence_unless(observation, cancel)?;
                reply.insert(EVIDENCE_ID_FIELD.to_owned(), record.id.to_string().into());
                Ok(reply)
            }
            Run::Observe { operation, run } => {
                let (provider, document) = checked.target_selection();
                let target = self.session.target(provider, document)?;
                check_support(&target, operation)?;
                let mut result = run(&target, &checked)?;
                check_size(spec.name, &result)?;
                let observation = target.observation(
                    spec.name,
                    Value::Object(arguments.clone()),
                    Value::Object(result.clone()),
                );
                cancel
                    .check()
                    .map_err(|_| ToolError::Cancelled { tool: spec.name })?;
                let record = self.session.record_evidence_unless(observation, cancel)?;
                result.insert(EVIDENCE_ID_FIELD.to_owned(), record.id.to_string().into());
                Ok(result)
            }
        }
    }

    /// The catalog tools a guided prompt may list now: tools not backed by a provider
    /// operation always; a provider-backed tool when the current provider supports its
    /// operation (`decompile`: when any declared provider does). With no binary open, provider-backed tools count as offered when the built-in
    /// native provider supports them (what `open_binary` on a binary opens), and the
    /// availability is [`BinarySession::Closed`], so renderings say `open_binary` comes first.
    pub fn availability(&self) -> ToolAvailability {
        let providers = self.session.providers();
        let (binary, supported) = if providers.is_empty() {
            let mut supported = NATIVE_OPERATIONS.to_vec();
            if let Some(companions) = self.session.companions() {
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
            (BinarySession::Open, supported)
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

/// Refuses a result whose JSON would be over [`MAX_RESULT_BYTES`] as an MCP result.
fn check_size(tool: &'static str, result: &Map<String, Value>) -> Result<(), ToolError> {
    let limit = (MAX_RESULT_BYTES - RESULT_OVERHEAD_BYTES) / 2;
    let mut counter = LimitedCounter { count: 0, limit };
    let fits = serde_json::to_writer(&mut counter, result).is_ok();
    // The text content escapes quotes and backslashes once more.
    if fits && counter.count <= limit {
        return Ok(());
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

fn check_support(target: &Target, operation: Operation) -> Result<(), ToolError> {
    let provider = target.provider();
    if provider.supports(operation) {
        return Ok(());
    }
    Err(ToolError::Unsupported {
        provider: target.provider_id().to_owned(),
        operation,
        supported: Operation::ALL
            .into_iter()
            .filter(|&op| provider.supports(op))
            .collect(),
    })
}
