//! Each built-in provider's `supports` agrees with its methods, operation by operation: every
//! member of `Operation::ALL` is performed once (an exhaustive `match`, so a new operation
//! must be added here), and answers `Unsupported` exactly when `supports` says no.

use std::time::{Duration, Instant};

use crate::support::fixtures::{Format, Spec, build};
use rea::providers::catalog::CatalogProvider;
use rea::providers::native::NativeProvider;
use rea::session::{
    Address, CodeScope, DecompileBound, DecompileNames, FingerprintBounds, NameMatch, Operation,
    ProcedureQuery, Provider, ProviderError, ReadLength, StringQuery,
};
use serde_json::json;

/// `operation` performed on `document` at `address`, reduced to whether the provider said it
/// does not perform it.
fn unsupported(
    provider: &dyn Provider,
    operation: Operation,
    document: &str,
    address: Address,
) -> bool {
    let said =
        |error: ProviderError| matches!(error, ProviderError::Unsupported(op) if op == operation);
    let length = ReadLength::new(4).unwrap();
    let outcome: Result<(), ProviderError> = match operation {
        Operation::ListDocuments => provider.list_documents().map(drop),
        Operation::ListProcedures => provider.list_procedures(document, None, 10).map(drop),
        Operation::ProcedureInfo => provider.procedure_info(document, address).map(drop),
        Operation::SearchProcedures => provider
            .search_procedures(document, &ProcedureQuery::new("a", NameMatch::Contains))
            .map(drop),
        Operation::ListSegments => provider.list_segments(document).map(drop),
        Operation::SearchStrings => provider
            .search_strings(document, &StringQuery::new("a"))
            .map(drop),
        Operation::ReadBytes => provider.read_bytes(document, address, length).map(drop),
        Operation::ListImports => provider.list_imports(document, None, 10).map(drop),
        Operation::Disassemble => provider
            .disassemble(document, CodeScope::Procedure(address), None, 10)
            .map(drop),
        Operation::XrefsTo => provider.xrefs_to(document, address, None, 10).map(drop),
        Operation::Callers => provider.callers(document, address, None, 10).map(drop),
        Operation::Callees => provider.callees(document, address, None, 10).map(drop),
        Operation::Decompile => provider
            .decompile(
                document,
                address,
                DecompileBound::default(),
                &DecompileNames::default(),
            )
            .map(drop),
        Operation::CompareProcedures => {
            let bounds = FingerprintBounds {
                max_procedures: 100,
                max_bytes: 1 << 24,
                deadline: Instant::now() + Duration::from_secs(30),
            };
            provider.fingerprints(document, &bounds).map(drop)
        }
    };
    outcome.err().is_some_and(said)
}

fn assert_agrees(provider: &dyn Provider, document: &str, address: Address) {
    for operation in Operation::ALL {
        assert_eq!(
            unsupported(provider, operation, document, address),
            !provider.supports(operation),
            "{}: {}",
            provider.id(),
            operation.name()
        );
    }
}

#[test]
fn every_operation_is_in_one_capability_set_or_is_decompiling() {
    let mut sets: Vec<Operation> = Operation::FROM_NAMES
        .into_iter()
        .chain(Operation::FROM_CODE)
        .chain([Operation::Decompile])
        .collect();
    let mut all = Operation::ALL.to_vec();
    sets.sort_by_key(|op| op.name());
    all.sort_by_key(|op| op.name());
    assert_eq!(sets, all);
}

#[test]
fn the_catalog_and_native_providers_support_exactly_what_their_methods_perform() {
    let catalog = json!({"schema": "rea.catalog", "version": 1, "documents": [{
        "name": "app",
        "segments": [{"name": ".text", "address": "0x1000", "size": 64, "permissions": "r-x"}],
        "procedures": [{"address": "0x1000", "name": "main", "size": 16}]}]});
    let catalog = CatalogProvider::from_json(&serde_json::to_vec(&catalog).unwrap()).unwrap();
    assert_agrees(&catalog, "app", Address::new(0x1000));
    let supported: Vec<&str> = Operation::ALL
        .iter()
        .filter(|op| catalog.supports(**op))
        .map(|op| op.name())
        .collect();
    assert_eq!(
        supported,
        [
            "list_documents",
            "list_procedures",
            "procedure_info",
            "search_procedures",
            "list_segments"
        ]
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.exe");
    std::fs::write(&path, build(&Spec::sample(), Format::Pe).bytes).unwrap();
    let native = NativeProvider::open(&path).unwrap();
    let document = native.list_documents().unwrap()[0].name.clone();
    let page = native.list_procedures(&document, None, 1).unwrap();
    let first = Address::new(u64::from_str_radix(&page.entries[0].address[2..], 16).unwrap());
    assert_agrees(&native, &document, first);
}
