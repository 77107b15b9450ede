"""netbox/ imports into NetBox with its own bulk import, in order, with nothing written by hand.

Checked against the choice values and import-form field names of a pinned NetBox release
(tests/data/netbox/netbox-4.6.8.json, read from its source by tests/data/netbox/extract.py),
then imported into a small in-memory model of what NetBox's bulk import resolves and refuses:
names looked up per the forms (device type by model, devices and cable ends per site),
uniqueness (device names per site, one cable per interface, types per manufacturer), rack
units that overlap, interfaces created from each device type's templates. Two designs go into
one NetBox. Counts equal cabling.csv and the summary."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml

from compiler.pipeline import write_outputs

from .conftest import SPECS, plan_from_text, shared_outputs, shared_plan


NETBOX = json.loads((Path(__file__).parent / "data" / "netbox" / "netbox-4.6.8.json").read_text())
CHOICES = {k: {str(v) for v in vals} for k, vals in NETBOX["choices"].items()}
FIELDS = {k: set(v) for k, v in NETBOX["import_fields"].items()}
FILES = {"sites.csv": "SiteImportForm", "racks.csv": "RackImportForm", "manufacturers/*.csv": "ManufacturerImportForm",
         "device-roles/*.csv": "DeviceRoleImportForm", "devices.csv": "DeviceImportForm", "cables.csv": "CableImportForm"}
# column -> the choice set its values must come from
COLUMN_CHOICES = {("sites.csv", "status"): "SiteStatusChoices", ("racks.csv", "status"): "RackStatusChoices",
                  ("racks.csv", "width"): "RackWidthChoices", ("racks.csv", "outer_unit"): "RackDimensionUnitChoices",
                  ("devices.csv", "status"): "DeviceStatusChoices", ("devices.csv", "face"): "DeviceFaceChoices",
                  ("cables.csv", "status"): "LinkStatusChoices", ("cables.csv", "type"): "CableTypeChoices",
                  ("cables.csv", "length_unit"): "CableLengthUnitChoices"}


def _rows(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


class ImportError_(AssertionError):
    pass


class NetBox:
    """What NetBox's bulk import resolves and refuses, for the objects clusterc writes."""

    def __init__(self):
        self.sites, self.racks, self.manufacturers, self.roles = {}, {}, {}, {}
        self.types, self.devices, self.interfaces, self.cabled = {}, {}, {}, set()
        self.occupied: dict[tuple, set[int]] = {}
        self.refused: list[str] = []  # files of shared records NetBox already had

    @staticmethod
    def _unique(table: dict, key, what: str):
        if key in table:
            raise ImportError_(f"{what} {key!r} is not a unique value")

    def import_folder(self, nb: Path) -> None:
        for r in _rows(nb / "sites.csv"):
            self._unique(self.sites, r["name"], "site")
            self.sites[r["name"]] = r
        if (nb / "racks.csv").exists():
            for r in _rows(nb / "racks.csv"):
                assert r["site"] in self.sites, f"Object not found: {r['site']}"
                self._unique(self.racks, (r["site"], r["name"]), "rack")
                self.racks[(r["site"], r["name"])] = r
        # one record per file: a file whose record NetBox has is refused whole, and the flow goes on
        for f in sorted((nb / "manufacturers").glob("*.csv")):
            [r] = _rows(f)
            if r["name"] in self.manufacturers:
                self.refused.append(f.name)
                continue
            self.manufacturers[r["name"]] = r
        for f in sorted((nb / "device-roles").glob("*.csv")):
            [r] = _rows(f)
            assert len(r["color"]) == 6
            if r["name"] in self.roles:
                self.refused.append(f.name)
                continue
            self.roles[r["name"]] = r
        for f in sorted((nb / "device-types").glob("*.yaml")):
            text = f.read_text()
            assert text.startswith("---")  # NetBox detects YAML by it
            [t] = list(yaml.safe_load_all(text))
            assert set(t) - {"interfaces"} <= FIELDS["DeviceTypeImportForm"], set(t)
            assert "interfaces" in NETBOX["device_type_related_objects"]
            key = (t["manufacturer"], t["model"])
            assert t["manufacturer"] in self.manufacturers, f"Object not found: {t['manufacturer']}"
            if key in self.types:
                assert self.types[key] == t  # the same hardware, the same record
                self.refused.append(f.name)
                continue
            assert t["slug"] not in {x["slug"] for x in self.types.values()}
            names = [i["name"] for i in t["interfaces"]]
            assert len(names) == len(set(names)), t["model"]
            for i in t["interfaces"]:
                assert set(i) <= FIELDS["InterfaceTemplateImportForm"] and i["type"] in CHOICES["InterfaceTypeChoices"], i
            self.types[key] = t
        for r in _rows(nb / "devices.csv"):
            for col, table in (("role", self.roles), ("site", self.sites)):
                assert r[col] in table, f"Object not found: {r[col]}"
            key = (r["manufacturer"], r["device_type"])
            assert key in self.types, f"Object not found: {r['device_type']}"
            self._unique(self.devices, (r["site"], r["name"]), "name")
            t = self.types[key]
            if r["rack"]:
                rack = self.racks[(r["site"], r["rack"])]  # the rack is looked up within the device's site
                units = set(range(int(r["position"]), int(r["position"]) + int(t["u_height"])))
                assert max(units) <= int(rack["u_height"]), r
                taken = self.occupied.setdefault((r["site"], r["rack"]), set())
                assert not units & taken, f"U{sorted(units & taken)} is already occupied: {r}"
                taken |= units
            self.devices[(r["site"], r["name"])] = r
            for i in t["interfaces"]:  # created from the type's templates
                self.interfaces[(r["site"], r["name"], i["name"])] = i
        for r in _rows(nb / "cables.csv"):
            for side in ("a", "b"):
                site, dev, name = r[f"side_{side}_site"], r[f"side_{side}_device"], r[f"side_{side}_name"]
                assert (site, dev) in self.devices, f"{side.upper()} side termination not found: {dev} {name}"
                key = (site, dev, name)
                assert r[f"side_{side}_type"] == "dcim.interface" and key in self.interfaces, \
                    f"{side.upper()} side termination not found: {dev} {name}"
                assert key not in self.cabled, f"Side {side.upper()}: {dev} {name} is already connected"
                self.cabled.add(key)
            if r["length"]:
                assert float(r["length"]) > 0 and r["length_unit"]
            assert not r["color"] or len(r["color"]) == 6


def _check_fields(nb: Path) -> None:
    for name, form in FILES.items():
        for path in sorted(nb.glob(name)):
            rows = _rows(path)
            header = list(rows[0]) if rows else []
            assert set(header) <= FIELDS[form], (name, set(header) - FIELDS[form])
            for (file, col), choice in COLUMN_CHOICES.items():
                if file == name:
                    for r in rows:
                        assert r[col] == "" or r[col] in CHOICES[choice], (name, col, r[col])


DESIGNS = ["h100-superpod-1su-multi-fabric-hall", "roce-2spine-4leaf-sonic", "tpu-v4-pod", "b200-superpod-4su-hall",
           "b300-xdr-1su"]


@pytest.fixture(scope="module")
def designs():
    return {name: (shared_plan(name), shared_outputs(name, ["netbox", "cabling", "summary"])) for name in DESIGNS}


@pytest.mark.parametrize("name", DESIGNS)
def test_netbox_folder_imports_in_order_with_the_pinned_releases_fields(designs, name):
    plan, target = designs[name]
    nb = target / "netbox"
    _check_fields(nb)
    box = NetBox()
    box.import_folder(nb)
    cabling = _rows(target / "cabling.csv")
    summary = json.loads((target / "summary.json").read_text())
    fabrics = summary.get("fabrics") or {"": summary}
    # NetBox cables join two interfaces: one per logical link a cabling.csv row carries (a
    # twin-port DAC row carries two), the summary's count, and one per management cord (a
    # switch's management port, an interface of its device type, to its management leaf)
    carried = sum(len(r["links"].split(";")) for r in cabling if not r["kind"].endswith("management-leaf"))
    cords = sum(r["kind"].endswith("management-leaf") for r in cabling)
    assert len(box.cabled) == 2 * (carried + cords)
    assert carried == sum(sum(f["cables"].values()) for f in fabrics.values())
    assert len(box.devices) == len(plan.devices)


def test_every_fabric_is_in_netbox(designs):
    """The storage and out-of-band fabrics' switches, their interfaces and cables are there too."""
    plan, target = designs["h100-superpod-1su-multi-fabric-hall"]
    box = NetBox()
    box.import_folder(target / "netbox")
    site = plan.name
    extra_switches = {d.name for d in plan.devices if d.fabric in ("storage", "oob") and d.role != "server"}
    assert {(site, "storage-su1-leaf-r1"), (site, "oob-leaf-001")} <= box.devices.keys()
    by_fabric = {}
    for r in _rows(target / "cabling.csv"):  # management cords included: the management ports are interfaces
        by_fabric[r["fabric"]] = by_fabric.get(r["fabric"], 0) + len(r["links"].split(";"))
    extra = [r for r in _rows(target / "netbox/cables.csv")
             if {r["side_a_device"], r["side_b_device"]} & extra_switches]
    assert len(extra) == by_fabric["storage"] + by_fabric["oob"] == 62 + 31 + 14  # + 8 leaves, 4 spines, 2 storage
    # a DGX's compute NICs are InfiniBand, its storage NICs Ethernet, its BMC RJ45
    dgx = next(t for (m, model), t in box.types.items() if model.startswith("DGX H100"))
    kinds = {i["name"]: i["type"] for i in dgx["interfaces"]}
    assert kinds["osfp1-p1"] == "infiniband-ndr" and kinds["slot1-p1"] == "400gbase-x-qsfp112" and kinds["bmc"] == "1000base-t"


def test_two_designs_in_one_netbox(designs):
    """A second design's devices share names with the first's (spine-01, leaf-001): unique per
    site, and every cable end names its site, so both import; the shared records are identical."""
    box = NetBox()
    box.import_folder(designs["roce-2spine-4leaf-sonic"][1] / "netbox")
    tmp = designs["roce-2spine-4leaf-sonic"][1].parent / "second"
    text = (SPECS / "roce-2spine-4leaf-sonic.yaml").read_text().replace("name: roce-2spine-4leaf-sonic", "name: second-hall")
    assert "name: second-hall" in text
    plan = plan_from_text(text)
    target = write_outputs(plan, tmp, ["netbox"])
    box.import_folder(target / "netbox")
    assert sorted(box.refused) == ["hgx-h100-compute.yaml", "leaf.csv", "nvidia.csv", "oem.csv", "server.csv", "sn5600-400.yaml",
                                   "spine.csv"]  # all of the first design's, as the second runs the same hardware
    assert ("second-hall", "spine-01") in box.devices and ("roce-2spine-4leaf-sonic", "spine-01") in box.devices
    assert len(box.cabled) == 4 * len(plan.links)


def test_the_netbox_model_refuses_what_netbox_refuses(designs, tmp_path):
    """The in-memory import is a gate: without the site columns a second design's cable end is
    ambiguous, a type unknown to NetBox's choices is refused, a doubly used U is refused."""
    src = designs["roce-2spine-4leaf-sonic"][1] / "netbox"
    box = NetBox()
    box.import_folder(src)
    with pytest.raises(AssertionError, match="not a unique value"):
        box.import_folder(src)  # the same site again
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(src, bad)
    typ = bad / "device-types" / "sn5600-400.yaml"
    typ.write_text(typ.read_text().replace("400gbase-x-osfp", "400gbase-x-osfp112", 1))
    with pytest.raises(AssertionError):
        NetBox().import_folder(bad)
    hall = designs["h100-superpod-1su-multi-fabric-hall"][1] / "netbox"
    rows = (hall / "devices.csv").read_text().splitlines()
    shutil.rmtree(bad)
    shutil.copytree(hall, bad)
    first, second = rows[1].split(","), rows[2].split(",")
    second[6] = first[6]  # the second server into the first one's units
    (bad / "devices.csv").write_text("\n".join([rows[0], rows[1], ",".join(second), *rows[3:]]) + "\n")
    with pytest.raises(AssertionError, match="already occupied"):
        NetBox().import_folder(bad)


@pytest.mark.parametrize("switch, speed, server, mapped", [
    ("sn5600", 200, "hpn-8x2x200g", {"200gbase-x-qsfp56"}),  # 200G in OSFP and QSFP112 cages
    ("sn5600", 400, "hgx-h100", set()),
])
def test_interface_types_are_netboxs_and_the_mapping_is_said(tmp_path, switch, speed, server, mapped):
    plan = plan_from_text(f"name: t\nservers: 8\nserver: {server}\nfabric: {{topology: fat-tree, switch: {switch}, "
                          f"speed_gbps: {speed}, oversubscription: '1:1'}}\n")
    nb = write_outputs(plan, tmp_path, ["netbox"]) / "netbox"
    types = {i["type"] for f in (nb / "device-types").glob("*.yaml") for t in yaml.safe_load_all(f.read_text())
             for i in t["interfaces"]}
    assert types <= CHOICES["InterfaceTypeChoices"] and "other" not in types
    readme = (nb / "README.md").read_text()
    for t in mapped:
        assert t in types and f"| {t} |" in readme
    assert ("closest NetBox type" in readme) == bool(mapped)


def test_management_ports_and_cords_are_in_netbox(designs):
    """Every switch's device type lists its management port (1000BASE-T, management only) and
    every management cord is a cable between the switch's and its management leaf's ports,
    with the cord's orderable length from the plan."""
    from compiler.plan.fabrics import management_cords

    plan, target = designs["h100-superpod-1su-multi-fabric-hall"]
    box = NetBox()
    box.import_folder(target / "netbox")
    for (_, model), t in box.types.items():
        mgmt = [i for i in t["interfaces"] if i.get("mgmt_only")]
        if model.startswith(("Quantum-2 QM9700", "Spectrum-4 SN5600", "Spectrum SN2201")):
            assert mgmt == [{"name": "mgmt0" if "QM9700" in model else "eth0", "type": "1000base-t", "mgmt_only": True}], model
        else:
            assert not mgmt, model
    cords = management_cords(plan)
    assert len(cords) == 14
    rows = {(r["side_a_device"], r["side_a_name"]): r for r in _rows(target / "netbox/cables.csv")}
    for c in cords:
        r = rows[(c.switch, c.port)]
        assert (r["side_b_device"], r["side_b_name"], r["type"]) == (c.leaf, c.leaf_port, "cat6")
        assert c.order_m is not None and float(r["length"]) == c.order_m and r["length_unit"] == "m"
