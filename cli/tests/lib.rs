//! The tests of the `atr` CLI: a package of their own, never published, so that the published
//! CLI declares only the targets it ships. They run the `atr` the workspace builds
//! (`common::atr_path`), with the library's features as the README's test command builds it.
