//! Resources and resource templates through the stdio loop (docs/CONTRACT.md section 14): the
//! lists, a read of every kind, the errors naming the part that did not resolve, completion of
//! template variables, and the `resource_link` that tool results carry.

use super::sessions::{catalog, open};
use crate::support::Client;
use crate::support::capture::valid_capture;
use crate::support::tools::this_executable;
use rea::mcp::{Server, ServerConfig};
use rea::resources::encode;
use serde_json::{Value, json};

fn snapshot(name: &str, value: &Value) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_json_snapshot!(format!("mcp_resources__{name}"), value);
    });
}

async fn started(version: &str) -> Client {
    let mut client = Client::start(Server::new(ServerConfig::default()));
    let init = client.initialize(version).await;
    assert!(init["result"]["capabilities"]["resources"].is_object());
    client
}

/// A tool call that must succeed; its result.
async fn call(client: &mut Client, name: &str, arguments: Value) -> Value {
    let result = super::sessions::call(client, name, arguments).await;
    assert_eq!(result["isError"], false, "{name}: {result}");
    result
}

async fn read(client: &mut Client, uri: &str) -> Value {
    client
        .request("resources/read", json!({ "uri": uri }))
        .await
}

/// The JSON a successful read holds.
async fn read_json(client: &mut Client, uri: &str) -> Value {
    let answer = read(client, uri).await;
    let contents = &answer["result"]["contents"][0];
    assert_eq!(contents["uri"], uri, "{answer}");
    assert_eq!(contents["mimeType"], "application/json");
    serde_json::from_str(contents["text"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn the_lists_are_static_and_the_schemas_read_as_published() {
    let mut client = started("2025-11-25").await;
    let listed = client.request("resources/list", json!({})).await;
    snapshot("list", &listed["result"]);
    for resource in listed["result"]["resources"].as_array().unwrap() {
        let uri = resource["uri"].as_str().unwrap();
        let answer = read(&mut client, uri).await;
        let text = answer["result"]["contents"][0]["text"].as_str().unwrap();
        assert_eq!(resource["size"], text.len(), "{uri}");
        if resource["mimeType"] == "application/schema+json" {
            let schema: Value = serde_json::from_str(text).unwrap();
            assert!(schema["$schema"].is_string(), "{uri}");
        }
    }
    let templates = client.request("resources/templates/list", json!({})).await;
    snapshot("templates", &templates["result"]);
    let bad = client
        .request("resources/list", json!({ "cursor": "2" }))
        .await;
    assert_eq!(bad["error"]["code"], -32602);
}

#[tokio::test]
async fn every_template_reads_its_kind_of_resource() {
    let mut client = started("2025-11-25").await;
    let exe = this_executable();
    let opened = call(
        &mut client,
        "open_binary",
        json!({ "path": exe.display().to_string() }),
    )
    .await;
    let session = opened["structuredContent"]["session"]
        .as_str()
        .unwrap()
        .to_owned();
    let document = opened["structuredContent"]["current_document"]
        .as_str()
        .unwrap()
        .to_owned();
    let base = format!("rea://session/{}", encode(&session));

    // An Evidence record, as get_evidence answers it.
    let listed = call(&mut client, "list_segments", json!({})).await;
    let id = listed["structuredContent"]["evidence_id"].as_str().unwrap();
    let record = read_json(&mut client, &format!("{base}/evidence/{id}")).await;
    assert_eq!(record["id"], id);
    assert_eq!(record["operation"], "list_segments");

    // An unknown with its revisions, oldest first.
    let first = call(&mut client, "register_unknown", json!({ "question": "a?" })).await;
    let first_id = first["structuredContent"]["id"].as_str().unwrap();
    let refined = call(
        &mut client,
        "refine_unknown",
        json!({ "id": first_id, "question": "a, precisely?" }),
    )
    .await;
    let head = refined["structuredContent"]["id"].as_str().unwrap();
    let unknown = read_json(&mut client, &format!("{base}/unknown/{head}")).await;
    let revisions: Vec<&str> = unknown["revisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|revision| revision["id"].as_str().unwrap())
        .collect();
    assert_eq!(revisions, [first_id, head]);

    // A procedure dossier: each part recorded as Evidence, like the tools.
    let before = call(&mut client, "list_evidence", json!({ "limit": 100 })).await;
    let dossier = read_json(
        &mut client,
        &format!("{base}/document/{}/procedure/main", encode(&document)),
    )
    .await;
    assert_eq!(
        dossier["procedure_info"]["name"]["name"], "main",
        "{dossier}"
    );
    for part in ["callers", "callees", "disassembly"] {
        assert!(dossier[part].is_object(), "{part}: {dossier}");
    }
    let after = call(&mut client, "list_evidence", json!({ "limit": 100 })).await;
    let recorded = after["structuredContent"]["total"].as_u64().unwrap()
        - before["structuredContent"]["total"].as_u64().unwrap();
    assert_eq!(recorded, 4, "procedure_info, callers, callees, disassemble");

    // An occurrence of a retained inventory.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    let page = call(
        &mut client,
        "inventory_artifacts",
        json!({ "path": dir.path().display().to_string() }),
    )
    .await;
    let manifest = page["structuredContent"]["manifest_id"].as_str().unwrap();
    let occurrence = page["structuredContent"]["occurrences"][0]["occurrence_id"]
        .as_str()
        .unwrap();
    let read_back = read_json(
        &mut client,
        &format!("{base}/inventory/{manifest}/occurrence/{occurrence}"),
    )
    .await;
    assert_eq!(read_back["occurrence"]["path"], "notes.txt");
    assert_eq!(read_back["manifest_id"], manifest);

    // A capture, as imported.
    let capture = call(
        &mut client,
        "import_process_capture",
        json!({ "capture": valid_capture() }),
    )
    .await;
    let capture_id = capture["structuredContent"]["evidence_id"]
        .as_str()
        .unwrap();
    let document = read_json(&mut client, &format!("{base}/capture/{capture_id}")).await;
    assert_eq!(document, valid_capture());
}

#[tokio::test]
async fn a_part_that_does_not_resolve_is_named_with_the_eras_code() {
    let mut client = started("2025-11-25").await;
    let session = open(&mut client, &catalog()).await;
    let mut messages = Vec::new();
    for uri in [
        "rea://nowhere".to_owned(),
        "rea://session/bs_closed/evidence/ev-000000000001".to_owned(),
        format!("rea://session/{session}/evidence/%FF"),
        format!("rea://session/{session}/evidence/ev-000000000001"),
        format!("rea://session/{session}/unknown/unk-9"),
        format!("rea://session/{session}/document/Notes/procedure/nope"),
        format!("rea://session/{session}/inventory/inv-x/occurrence/occ-y"),
        format!("rea://session/{session}/capture/ev-000000000001"),
    ] {
        let answer = read(&mut client, &uri).await;
        assert_eq!(answer["error"]["code"], -32002, "{uri}: {answer}");
        messages.push(answer["error"]["message"].as_str().unwrap().to_owned());
    }
    let text = messages.join("\n").replace(&session, "[session]");
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!("mcp_resources__unresolved", text);
    });
}

#[tokio::test]
async fn template_variables_complete_from_their_families_with_the_other_variables() {
    let mut client = started("2025-11-25").await;
    let session = open(&mut client, &catalog()).await;
    let recorded = call(&mut client, "list_documents", json!({})).await;
    let id = recorded["structuredContent"]["evidence_id"].clone();
    let complete = |template: &str, variable: &str, value: &str, context: Value| {
        json!({
            "ref": { "type": "ref/resource", "uri": template },
            "argument": { "name": variable, "value": value },
            "context": { "arguments": context },
        })
    };
    let values = |answer: &Value| answer["result"]["completion"]["values"].clone();

    let evidence = client
        .request(
            "completion/complete",
            complete(
                "rea://session/{session}/evidence/{evidence_id}",
                "evidence_id",
                "ev-",
                json!({ "session": session }),
            ),
        )
        .await;
    assert_eq!(values(&evidence), json!([id]));
    let procedures = client
        .request(
            "completion/complete",
            complete(
                "rea://session/{session}/document/{document}/procedure/{procedure}",
                "procedure",
                "helper",
                json!({ "session": session, "document": "NotesHelper" }),
            ),
        )
        .await;
    assert_eq!(values(&procedures), json!(["helper_main"]));
    let handles = client
        .request(
            "completion/complete",
            complete(
                "rea://session/{session}/capture/{capture_id}",
                "session",
                "",
                json!({}),
            ),
        )
        .await;
    assert_eq!(values(&handles), json!([session]));

    // Occurrences complete within the manifest given.
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut manifests = Vec::new();
    for (dir, file) in dirs.iter().zip(["one.txt", "two.txt"]) {
        std::fs::write(dir.path().join(file), file).unwrap();
        let page = call(
            &mut client,
            "inventory_artifacts",
            json!({ "path": dir.path().display().to_string() }),
        )
        .await;
        manifests.push((
            page["structuredContent"]["manifest_id"].clone(),
            page["structuredContent"]["occurrences"][0]["occurrence_id"].clone(),
        ));
    }
    for (manifest, occurrence) in &manifests {
        let answer = client
            .request(
                "completion/complete",
                complete(
                    "rea://session/{session}/inventory/{manifest_id}/occurrence/{occurrence_id}",
                    "occurrence_id",
                    "",
                    json!({ "session": session, "manifest_id": manifest }),
                ),
            )
            .await;
        assert_eq!(values(&answer), json!([occurrence]));
    }

    for (template, variable) in [
        ("rea://session/{session}/nothing/{x}", "x"),
        ("rea://session/{session}/evidence/{evidence_id}", "document"),
    ] {
        let answer = client
            .request(
                "completion/complete",
                complete(template, variable, "", json!({})),
            )
            .await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
    }
}

#[tokio::test]
async fn observations_link_their_evidence_as_a_resource_where_the_version_has_links() {
    for (version, linked) in [
        ("2025-11-25", true),
        ("2025-06-18", true),
        ("2025-03-26", false),
    ] {
        let mut client = started(version).await;
        let opened = call(&mut client, "open_binary", json!({ "path": catalog() })).await;
        let session = opened["structuredContent"]["session"].as_str().unwrap();
        assert_eq!(opened["content"].as_array().unwrap().len(), 1);
        let observed = call(&mut client, "list_procedures", json!({})).await;
        let content = observed["content"].as_array().unwrap();
        let id = observed["structuredContent"]["evidence_id"]
            .as_str()
            .unwrap();
        if linked {
            assert_eq!(content.len(), 2, "{version}");
            let link = &content[1];
            assert_eq!(link["type"], "resource_link");
            assert_eq!(
                link["uri"],
                format!("rea://session/{session}/evidence/{id}")
            );
            let record = read_json(&mut client, link["uri"].as_str().unwrap()).await;
            assert_eq!(record["id"], id);
        } else {
            assert_eq!(content.len(), 1, "{version}");
        }
    }
}

#[tokio::test]
async fn a_2026_client_lists_reads_and_is_refused_with_invalid_params() {
    let mut client = Client::start(Server::new(ServerConfig::default()));
    let listed = client
        .request_modern("resources/list", json!({}), json!({}))
        .await;
    assert_eq!(listed["result"]["ttlMs"], 60_000);
    assert_eq!(listed["result"]["resources"].as_array().unwrap().len(), 4);
    let templates = client
        .request_modern("resources/templates/list", json!({}), json!({}))
        .await;
    assert_eq!(
        templates["result"]["resourceTemplates"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    let schema = client
        .request_modern(
            "resources/read",
            json!({ "uri": "rea://schema/catalog-v1" }),
            json!({}),
        )
        .await;
    // A static resource never changes while the process runs (resource_caching.rs has the
    // session resources).
    assert_eq!(schema["result"]["ttlMs"], 60_000);
    assert_eq!(schema["result"]["cacheScope"], "public");
    assert_eq!(schema["result"]["resultType"], "complete");
    let unresolved = client
        .request_modern(
            "resources/read",
            json!({ "uri": "rea://session/bs_gone/evidence/ev-000000000001" }),
            json!({}),
        )
        .await;
    assert_eq!(unresolved["error"]["code"], -32602, "{unresolved}");
    assert!(
        unresolved["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bs_gone")
    );
}
