"""Writes netbox-4.6.8.json: the choice values and bulk-import field names of a NetBox release,
read from its source (netbox/dcim/choices.py, dcim/forms/bulk_import.py, dcim/forms/object_import.py,
dcim/views.py), for tests/test_netbox.py. Run by hand against a checkout of the release:

    python tests/data/netbox/extract.py /path/to/netbox-checkout v4.6.8 > tests/data/netbox/netbox-4.6.8.json

(the checkout's git objects are read at the tag, so any branch may be checked out)."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys

CHOICES = ["InterfaceTypeChoices", "CableTypeChoices", "LinkStatusChoices", "DeviceStatusChoices", "SiteStatusChoices",
           "RackStatusChoices", "RackWidthChoices", "DeviceFaceChoices", "CableLengthUnitChoices", "RackDimensionUnitChoices",
           "DeviceAirflowChoices"]
FORMS = {"dcim/forms/bulk_import.py": ["SiteImportForm", "RackImportForm", "ManufacturerImportForm", "DeviceTypeImportForm",
                                       "DeviceRoleImportForm", "DeviceImportForm", "CableImportForm", "InterfaceImportForm"],
         "dcim/forms/object_import.py": ["InterfaceTemplateImportForm"]}


def show(repo: str, tag: str, path: str) -> str:
    text = subprocess.run(["git", "-C", repo, "show", f"{tag}:netbox/{path}"], check=True, capture_output=True, text=True).stdout
    # NetBox needs Python 3.12 (f-strings reusing their quote); blank those lines for an older ast
    return re.sub(r"^(\s*)(.*f'[^'\n]*\{[^}\n]*\['.*)$", r"\1pass", text, flags=re.M)


def choice_values(tree: ast.Module, name: str) -> list:
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
    values = []
    for node in cls.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.targets[0].id.isupper() \
                and node.targets[0].id not in ("key",):
            values.append(node.value.value)
    return values


def meta_fields(tree: ast.Module, name: str) -> list[str]:
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
    declared = [n.targets[0].id for n in cls.body if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)]
    meta = next((n for n in cls.body if isinstance(n, ast.ClassDef) and n.name == "Meta"), None)
    fields = []
    if meta is not None:
        for n in meta.body:
            if isinstance(n, ast.Assign) and n.targets[0].id == "fields":
                fields = [e.value for e in n.value.elts]
    return sorted(set(fields) | set(declared))


def main(repo: str, tag: str) -> None:
    commit = subprocess.run(["git", "-C", repo, "rev-parse", f"{tag}^{{commit}}"], check=True, capture_output=True,
                            text=True).stdout.strip()
    choices = ast.parse(show(repo, tag, "dcim/choices.py"))
    out = {"release": tag, "commit": commit,
           "sources": [f"netbox-community/netbox {tag} ({commit[:8]}) netbox/dcim/choices.py",
                       f"netbox-community/netbox {tag} netbox/dcim/forms/bulk_import.py",
                       f"netbox-community/netbox {tag} netbox/dcim/forms/object_import.py",
                       f"netbox-community/netbox {tag} netbox/dcim/views.py DeviceTypeImportView.related_object_forms"],
           "choices": {name: choice_values(choices, name) for name in CHOICES},
           "import_fields": {}}
    for path, forms in FORMS.items():
        tree = ast.parse(show(repo, tag, path))
        for form in forms:
            out["import_fields"][form] = meta_fields(tree, form)
    # BaseDeviceImportForm declares the related fields DeviceImportForm's Meta lists
    tree = ast.parse(show(repo, tag, "dcim/forms/bulk_import.py"))
    out["import_fields"]["DeviceImportForm"] = sorted(set(out["import_fields"]["DeviceImportForm"])
                                                      | set(meta_fields(tree, "BaseDeviceImportForm")))
    views = show(repo, tag, "dcim/views.py")
    start = views.index("class DeviceTypeImportView")
    block = views[views.index("related_object_forms = {", start):views.index("}", views.index("related_object_forms = {", start))]
    out["device_type_related_objects"] = sorted(k.strip().strip("'") for k in
                                                (line.split(":")[0] for line in block.splitlines()[1:]) if k.strip())
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
