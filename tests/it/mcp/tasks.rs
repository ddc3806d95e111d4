//! Long work as tasks (docs/CONTRACT.md section 18) through the real `rea serve` over stdio on a SQLite store:
//! `run_process_capture` of a compiled program that sleeps (approved by `--approve-captures`,
//! a slow but real path) driven as 2025-11-25 tasks (`params.task`, `tasks/get`,
//! `tasks/result`, `tasks/list`, `tasks/cancel`) and as a 2026-07-28 task (the extension
//! declared in `_meta`), one to completion, one to cancellation, and one across a SIGKILL and
//! a restart: after it the finished task still answers its result and the cut one is
//! `failed` with a reason saying the server restarted.

use std::path::Path;
use std::time::{Duration, Instant};

use rea_testkit::server_process::ServerProcess;
use serde_json::{Value, json};

use crate::support::capture::sandboxed::{REA, compile, program_dir};
use crate::support::client::with_modern_meta;

const SLEEPER: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    unsigned seconds = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
    sleep(seconds);
    printf("slept %u\n", seconds);
    return 0;
}
"#;

fn serve(store: &Path, root: &Path) -> ServerProcess {
    ServerProcess::start_with(
        REA,
        [
            "--store".as_ref(),
            store.as_os_str(),
            "--approve-captures".as_ref(),
            "--root".as_ref(),
            root.as_os_str(),
        ],
    )
}

fn request(server: &mut ServerProcess, method: &str, params: Value) -> Value {
    let id = server.send(method, params);
    server.response(id)
}

/// Starts a capture of `seconds` as a 2025-11-25 task; its task object.
fn start(server: &mut ServerProcess, document: &Value, seconds: &str) -> Value {
    let answer = request(
        server,
        "tools/call",
        json!({
            "name": "run_process_capture",
            "arguments": {"program": document, "arguments": [seconds], "timeout_secs": 100},
            "task": {"ttl": 600_000},
        }),
    );
    let task = answer["result"]["task"].clone();
    assert!(task["taskId"].is_string(), "a task: {answer}");
    assert_eq!(task["status"], "working", "{answer}");
    assert_eq!(task["ttl"], 600_000);
    assert!(task["pollInterval"].as_u64().unwrap() > 0);
    task
}

fn get(server: &mut ServerProcess, id: &Value) -> Value {
    let answer = request(server, "tasks/get", json!({"taskId": id}));
    assert!(answer["result"]["status"].is_string(), "{answer}");
    answer["result"].clone()
}

/// Polls `tasks/get` until the task has ended.
fn ended(server: &mut ServerProcess, id: &Value) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let task = get(server, id);
        if ["completed", "failed", "cancelled"].contains(&task["status"].as_str().unwrap()) {
            return task;
        }
        assert!(Instant::now() < deadline, "the task did not end: {task}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Starts a capture of 60 s as a 2025-11-25 task and cancels it at once; its task object.
fn start_and_cancel(server: &mut ServerProcess, document: &Value) -> Value {
    let cancelled = start(server, document, "60");
    let answer = request(
        server,
        "tasks/cancel",
        json!({"taskId": cancelled["taskId"]}),
    );
    assert_eq!(answer["result"]["status"], "cancelled", "{answer}");
    cancelled
}

fn kill(server: &ServerProcess) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn captures_run_as_tasks_finish_cancel_and_survive_a_restart() {
    let dir = program_dir();
    let sleeper = compile(dir.path(), "sleeper", SLEEPER);
    let store_dir = tempfile::tempdir().unwrap();
    let store = store_dir.path().join("store.sqlite");
    let mut server = serve(&store, dir.path());
    let opened = server.tool("open_binary", json!({"path": sleeper}));
    assert_eq!(opened["isError"], false, "{opened}");
    let document = opened["structuredContent"]["current_document"].clone();
    let session = opened["structuredContent"]["session"].clone();

    // The long tools say they may answer a task; the others do not.
    let tools = request(&mut server, "tools/list", json!({}));
    for tool in tools["result"]["tools"].as_array().unwrap() {
        let long = [
            "decompile",
            "run_process_capture",
            "inventory_artifacts",
            "compare_procedures",
        ]
        .contains(&tool["name"].as_str().unwrap());
        assert_eq!(
            tool["execution"]["taskSupport"] == "optional",
            long,
            "{}",
            tool["name"]
        );
    }

    // To completion: tasks/result answers the capture, tagged with its task.
    let finished = start(&mut server, &document, "1");
    let done = ended(&mut server, &finished["taskId"]);
    assert_eq!(done["status"], "completed", "{done}");
    let result = request(
        &mut server,
        "tasks/result",
        json!({"taskId": finished["taskId"]}),
    );
    let result = &result["result"];
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["structuredContent"]["capture"]["exit"]["code"], 0,
        "{result}"
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        finished["taskId"]
    );

    // To cancellation: cancelled at once, and nothing of it is committed.
    let before = server.tool("list_evidence", json!({}));
    let cancelled = start_and_cancel(&mut server, &document);
    assert_eq!(
        get(&mut server, &cancelled["taskId"])["status"],
        "cancelled"
    );
    let again = request(
        &mut server,
        "tasks/cancel",
        json!({"taskId": cancelled["taskId"]}),
    );
    assert_eq!(again["error"]["code"], -32602, "a finished task: {again}");
    let after = server.tool("list_evidence", json!({}));
    assert_eq!(before["structuredContent"], after["structuredContent"]);

    // tasks/list: this session's tasks.
    let listed = request(&mut server, "tasks/list", json!({}));
    assert_eq!(
        listed["result"]["tasks"].as_array().unwrap().len(),
        2,
        "{listed}"
    );

    // Across a restart: SIGKILL while one works.
    let cut = start(&mut server, &document, "60");
    assert_eq!(get(&mut server, &cut["taskId"])["status"], "working");
    kill(&server);
    drop(server);
    let mut server = serve(&store, dir.path());
    let failed = get(&mut server, &cut["taskId"]);
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(
        failed["statusMessage"]
            .as_str()
            .unwrap()
            .contains("restarted"),
        "{failed}"
    );
    let kept = get(&mut server, &finished["taskId"]);
    assert_eq!(kept["status"], "completed");
    let result = request(
        &mut server,
        "tasks/result",
        json!({"taskId": finished["taskId"]}),
    );
    assert_eq!(
        result["result"]["structuredContent"]["capture"]["exit"]["code"], 0,
        "{result}"
    );
    assert_eq!(
        get(&mut server, &cancelled["taskId"])["status"],
        "cancelled"
    );
    let unknown = request(&mut server, "tasks/get", json!({"taskId": "task_nope"}));
    assert_eq!(unknown["error"]["code"], -32602);

    // A 2026 request over stdio: the extension declared in _meta, a flat CreateTaskResult
    // (an inventory of the program's folder: a 2026 capture asks its approval through
    // input_required, which --approve-captures does not replace).
    let tasks = json!({"io.modelcontextprotocol/clientCapabilities":
        {"extensions": {"io.modelcontextprotocol/tasks": {}}}});
    let answer = request(
        &mut server,
        "tools/call",
        with_modern_meta(
            json!({"name": "inventory_artifacts", "arguments":
                {"session": session, "path": dir.path()}}),
            tasks.clone(),
        ),
    );
    let created = &answer["result"];
    assert_eq!(created["resultType"], "task", "{answer}");
    assert!(created["ttlMs"].as_u64().unwrap() > 0);
    assert!(created["pollIntervalMs"].as_u64().unwrap() > 0);
    let id = created["taskId"].clone();
    let deadline = Instant::now() + Duration::from_secs(60);
    let detailed = loop {
        let answer = request(
            &mut server,
            "tasks/get",
            with_modern_meta(json!({"taskId": id}), tasks.clone()),
        );
        let task = answer["result"].clone();
        assert_eq!(task["resultType"], "complete", "{answer}");
        if task["status"] != "working" {
            break task;
        }
        assert!(Instant::now() < deadline, "{task}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(detailed["status"], "completed", "{detailed}");
    assert_eq!(detailed["result"]["isError"], false, "{detailed}");
    assert!(
        detailed["result"]["structuredContent"]["manifest_id"].is_string(),
        "{detailed}"
    );
    // Without the extension declared, the 2026 tasks methods are refused (-32021).
    let refused = request(
        &mut server,
        "tasks/get",
        with_modern_meta(json!({"taskId": id}), json!({})),
    );
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    server.finish();
}

#[test]
fn a_2025_task_that_ends_is_told_once_as_a_status_notification_valid_against_the_schema() {
    let dir = program_dir();
    let sleeper = compile(dir.path(), "sleeper", SLEEPER);
    let store_dir = tempfile::tempdir().unwrap();
    let mut server = serve(&store_dir.path().join("store.sqlite"), dir.path());
    let opened = server.tool("open_binary", json!({"path": sleeper}));
    let document = opened["structuredContent"]["current_document"].clone();

    // One ends on its own, one by tasks/cancel (its answer is the news: nothing more is sent).
    let finished = start(&mut server, &document, "1");
    start_and_cancel(&mut server, &document);
    let notification = loop {
        let message = server.next_message();
        if message["method"] == "notifications/tasks/status" {
            break message;
        }
        assert!(
            message.get("method").is_some(),
            "no answer is due: {message}"
        );
    };
    crate::support::client::assert_schema_valid(
        "2025-11-25",
        "TaskStatusNotification",
        &notification,
    );
    let params = &notification["params"];
    assert_eq!(params["taskId"], finished["taskId"], "{notification}");
    assert_eq!(params["status"], "completed", "{notification}");
    assert_eq!(params["createdAt"], finished["createdAt"]);
    assert_eq!(params["ttl"], 600_000);
    // What tasks/get says after it is what the notification said.
    let polled = get(&mut server, &finished["taskId"]);
    assert_eq!(&polled, params);
    // The cancelled task's run ended a second before the other task (its sandbox is killed
    // at the cancel), and was not told: the first status notification above is the finished
    // task's, and none comes before the next answer either.
    let ping = server.send("ping", json!({}));
    let next = server.next_message();
    assert_eq!(next["id"], ping, "{next}");
}
