"""Catalog data (TOML), shipped inside the package as ``rigcheck.catalog``; see docs/catalog.md."""
