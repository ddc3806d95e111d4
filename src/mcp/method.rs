//! The MCP methods rea serves, as one type parsed once from a request: each method's wire
//! name and its policy. Under 2026-07-28 a method is kept (and its result cached or not),
//! answered without the method table, or removed; `ping` never waits for a running slot;
//! `initialize` starts a 2025 connection and may not come in a batch; the method table
//! (`handlers::module`) registers each by [`Method::name`].

use serde_json::Value;

use super::era::{Caching, ModernMethod, PROMPTS_TTL_MS, STABLE_TTL_MS};
use super::protocol::Offer;

/// A method rea knows (a request for any other is `-32601`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Initialize,
    Ping,
    PromptsList,
    PromptsGet,
    CompletionComplete,
    ResourcesList,
    ResourcesTemplatesList,
    ResourcesRead,
    ResourcesSubscribe,
    ResourcesUnsubscribe,
    LoggingSetLevel,
    ToolsList,
    ToolsCall,
    TasksGet,
    TasksUpdate,
    TasksCancel,
    TasksList,
    TasksResult,
    ServerDiscover,
    SubscriptionsListen,
}

impl Method {
    /// Every method, in the order the method table registers them.
    pub(crate) const ALL: [Method; 20] = [
        Method::Initialize,
        Method::Ping,
        Method::PromptsList,
        Method::PromptsGet,
        Method::CompletionComplete,
        Method::ResourcesList,
        Method::ResourcesTemplatesList,
        Method::ResourcesRead,
        Method::ResourcesSubscribe,
        Method::ResourcesUnsubscribe,
        Method::LoggingSetLevel,
        Method::ToolsList,
        Method::ToolsCall,
        Method::TasksGet,
        Method::TasksUpdate,
        Method::TasksCancel,
        Method::TasksList,
        Method::TasksResult,
        Method::ServerDiscover,
        Method::SubscriptionsListen,
    ];

    /// The method's name on the wire.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Method::Initialize => "initialize",
            Method::Ping => "ping",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::CompletionComplete => "completion/complete",
            Method::ResourcesList => "resources/list",
            Method::ResourcesTemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::ResourcesSubscribe => "resources/subscribe",
            Method::ResourcesUnsubscribe => "resources/unsubscribe",
            Method::LoggingSetLevel => "logging/setLevel",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::TasksGet => "tasks/get",
            Method::TasksUpdate => "tasks/update",
            Method::TasksCancel => "tasks/cancel",
            Method::TasksList => "tasks/list",
            Method::TasksResult => "tasks/result",
            Method::ServerDiscover => "server/discover",
            Method::SubscriptionsListen => "subscriptions/listen",
        }
    }

    /// The method named `name`, if rea knows it.
    pub(crate) fn parse(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|method| method.name() == name)
    }

    /// What the method is under 2026-07-28 for a server that offers `offer` (`params` decide
    /// the caching of a read).
    pub(crate) fn modern(self, params: Option<&Value>, offer: Offer) -> ModernMethod {
        let cached = |caching| ModernMethod::Shared {
            caching: Some(caching),
        };
        let uncached = ModernMethod::Shared { caching: None };
        match self {
            Method::ServerDiscover => ModernMethod::Discover,
            Method::SubscriptionsListen => ModernMethod::Listen,
            Method::PromptsList => cached(Caching::public(PROMPTS_TTL_MS)),
            Method::ToolsList if offer.tools => cached(Caching::public(STABLE_TTL_MS)),
            Method::PromptsGet | Method::CompletionComplete => uncached,
            Method::ToolsCall | Method::TasksGet | Method::TasksUpdate | Method::TasksCancel
                if offer.tools =>
            {
                uncached
            }
            Method::ResourcesList | Method::ResourcesTemplatesList => {
                cached(Caching::public(STABLE_TTL_MS))
            }
            // A session's resources change as the session does, and are that client's own.
            Method::ResourcesRead => cached(Caching::of_read(params)),
            Method::Initialize
            | Method::Ping
            | Method::LoggingSetLevel
            | Method::ResourcesSubscribe
            | Method::ResourcesUnsubscribe => ModernMethod::Removed,
            // The 2025 tasks methods with no 2026 counterpart, and the tool methods of a
            // server without tools.
            Method::ToolsList
            | Method::ToolsCall
            | Method::TasksGet
            | Method::TasksUpdate
            | Method::TasksCancel
            | Method::TasksList
            | Method::TasksResult => ModernMethod::Unknown,
        }
    }

    /// The `params` member a 2026 request of it names in the `Mcp-Name` header, if it has one.
    pub(crate) fn named_member(self) -> Option<&'static str> {
        match self {
            Method::ToolsCall | Method::PromptsGet => Some("name"),
            Method::ResourcesRead => Some("uri"),
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => Some("taskId"),
            Method::Initialize
            | Method::Ping
            | Method::PromptsList
            | Method::CompletionComplete
            | Method::ResourcesList
            | Method::ResourcesTemplatesList
            | Method::ResourcesSubscribe
            | Method::ResourcesUnsubscribe
            | Method::LoggingSetLevel
            | Method::ToolsList
            | Method::TasksList
            | Method::TasksResult
            | Method::ServerDiscover
            | Method::SubscriptionsListen => None,
        }
    }

    /// Whether a request for it waits for a running slot: `ping` never does, so a client can
    /// always tell the server is alive.
    pub(crate) fn needs_slot(self) -> bool {
        self != Method::Ping
    }
}

impl ModernMethod {
    /// What `method` (with `params`) is under 2026-07-28 for a server that offers `offer`.
    pub fn of(method: &str, params: Option<&Value>, offer: Offer) -> ModernMethod {
        Method::parse(method).map_or(ModernMethod::Unknown, |method| method.modern(params, offer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_parses_from_its_own_name_and_no_other() {
        for method in Method::ALL {
            assert_eq!(Method::parse(method.name()), Some(method));
        }
        let mut names: Vec<&str> = Method::ALL.iter().map(|method| method.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Method::ALL.len());
        for unknown in [
            "",
            "Ping",
            "tools/call ",
            "notifications/initialized",
            "rpc.discover",
        ] {
            assert_eq!(Method::parse(unknown), None, "{unknown:?}");
        }
        let slotless: Vec<Method> = Method::ALL
            .into_iter()
            .filter(|method| !method.needs_slot())
            .collect();
        assert_eq!(slotless, [Method::Ping]);
    }
}
