"""compiler/catalog/load.py: the built-in catalog files are parsed once per process (every
compile loads the catalog; parsing was most of that), and each load_catalog() still returns
a catalog of its own, so a caller that changes one changes no other."""

from __future__ import annotations

from compiler.catalog import load as catalog_load


def test_built_in_files_are_parsed_once_and_each_catalog_is_its_own(monkeypatch):
    first = catalog_load.load_catalog()
    parsed: list[str] = []
    real = catalog_load.load_yaml_text

    def counting(text: str, file: str):
        parsed.append(file)
        return real(text, file)

    monkeypatch.setattr(catalog_load, "load_yaml_text", counting)
    second = catalog_load.load_catalog()
    assert parsed == [], "the built-in files were parsed again"
    assert second == first
    assert second.servers is not first.servers and second.servers["dgx-h100"] is not first.servers["dgx-h100"]
    del second.servers["dgx-h100"]
    second.switches["qm9700"] = second.switches["qm9790"]  # records are frozen; the tables are the catalog's own
    third = catalog_load.load_catalog()
    assert "dgx-h100" in third.servers and third.switches["qm9700"] == first.switches["qm9700"]
    assert third.switches["qm9700"].id == "qm9700"
