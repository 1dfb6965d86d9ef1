"""Hostile inputs: each ends in a lab or an ``InputError`` naming file, place and field,
within its time and memory bound (the memory-bound ones run under ``resource.setrlimit``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalnb
import evalnb.io.archive
from evalnb_testkit.budget import examples
from evalnb_testkit.hostile import adversarial_texts
from evalnb_testkit.mutations import mutate_tree

_DEEP = "[" * 1000 + "]" * 1000
_NESTED = '{"a": ' * 500 + "1" + "}" * 500
_ROW = '{"prompt": "a", "actual": "x"'

# name → (file content, None when it loads, else a regex the InputError message matches)
CASES: dict[str, tuple[str, str | None]] = {
    "number of 400 digits (extra column)": (f'{_ROW}, "score": {"9" * 400}}}\n', None),
    "number of 400 digits (cost)": (
        f'{_ROW}, "cost": {"9" * 400}}}\n',
        r"line 1: field 'cost': expected a finite number",
    ),
    "integer of 5000 digits": (f'{_ROW}, "n": {"9" * 5000}}}\n', r"line 1.*digits"),
    "sample 10^23": (
        f'{_ROW}, "sample": {10**23}}}\n',
        r"line 1: field 'sample': expected a non-negative integer sample index below 2\*\*63",
    ),
    "sample 2^63": (f'{_ROW}, "sample": {2**63}}}\n', r"line 1: field 'sample'"),
    "sample 1e400": (f'{_ROW}, "sample": 1e400}}\n', r"line 1: field 'sample'"),
    "1000-deep answer (JSONL)": (
        f'{{"prompt": "a", "actual": {_DEEP}}}\n',
        r"line 1: expected JSON nested < 1000 levels",
    ),
    "990-deep context (JSONL)": (
        f'{_ROW}, "context": {"[" * 990}{"]" * 990}}}\n',
        r"line 1: (field 'context': expected a list|expected JSON nested)",
    ),
    "500-deep extra (JSON)": (
        f'[{_ROW}, "meta": {_NESTED}}}]',
        r"\$\[0\]: expected values nested fewer than",
    ),
    "U+2028/U+2029/U+0085 in strings": (
        '{"prompt": "a\u2028b", "actual": "c\u2029d\u0085e"}\n{"prompt": "x", "actual": "y"}\n',
        None,
    ),
    "CSV field of 200 KB": ("prompt,actual\na," + "b" * 200_000 + "\n", None),
    "repeated case_id, other content": (
        '{"case_id": "1", "prompt": "a", "actual": "x"}\n'
        '{"case_id": "1", "prompt": "b", "actual": "y"}\n',
        r"line 2: field 'case_id': expected a unique id",
    ),
    "repeated answer": (f"{_ROW}}}\n{_ROW}}}\n", r"line 2: field 'model': expected one answer"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_file(case: str, tmp_path: Path) -> None:
    content, error = CASES[case]
    path = tmp_path / (
        "lab.csv" if "CSV" in case else "lab.json" if "(JSON)" in case else "lab.jsonl"
    )
    path.write_text(content, encoding="utf-8")
    start = time.perf_counter()
    if error is None:
        lab = evalnb.load(path)
        assert lab.outputs.height >= 1
    else:
        with pytest.raises(evalnb.InputError, match=error) as caught:
            evalnb.load(path)
        assert str(path) in str(caught.value)
    assert time.perf_counter() - start < 30  # a bound, not a benchmark: hangs fail here


def test_line_separators_inside_strings_survive(tmp_path: Path) -> None:
    path = tmp_path / "lab.jsonl"
    path.write_text(CASES["U+2028/U+2029/U+0085 in strings"][0], encoding="utf-8")
    lab = evalnb.load(path)
    assert lab.cases["prompt"].to_list() == ["a\u2028b", "x"]
    assert lab.outputs["actual"].to_list() == ["c\u2029d\u0085e", "y"]


# --- archives -------------------------------------------------------------------------


def _archive(tmp_path: Path) -> Path:
    lab = evalnb.load(pl.DataFrame({"prompt": ["p1", "p2"], "actual": ["a@b.co", "fine"]}))
    return evalnb.evaluate(lab, ["pii_leakage"], progress=False).archive(tmp_path / "a.zip")


def _rewrite(src: Path, dst: Path, edit: dict[str, object], extra: dict[str, bytes]) -> Path:
    """Copy archive ``src`` to ``dst``, replacing members' JSON and adding raw members."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename in edit:
                data = json.dumps(edit[info.filename]).encode()
            zout.writestr(info.filename, data)
        for name, data in extra.items():
            zout.writestr(name, data)
    return dst


def _interp(path: Path) -> dict[str, object]:
    with zipfile.ZipFile(path) as zf:
        doc: dict[str, object] = json.loads(zf.read("interpretation.json"))
        return doc


def _results(path: Path) -> bytes:
    with zipfile.ZipFile(path) as zf:
        return zf.read("pii_leakage/results.json")


def test_archive_wrong_shapes_and_bad_ids(tmp_path: Path) -> None:
    src = _archive(tmp_path)
    lab_doc = _interp(src)["lab"]
    assert isinstance(lab_doc, dict)
    outputs = lab_doc["outputs"]
    results = json.loads(_results(src))
    bad: dict[str, tuple[dict[str, object], dict[str, bytes], str]] = {
        "interpretation is a list": (
            {"interpretation.json": [1, 2]},
            {},
            r"interpretation\.json, \$: field 'lab'",
        ),
        "tables not lists": (
            {"interpretation.json": {"lab": {"cases": {"a": 1}}}},
            {},
            r"field 'lab\.cases': expected a list of record objects",
        ),
        "a record not an object": (
            {"interpretation.json": {"lab": {**lab_doc, "outputs": [1]}}},
            {},
            r"lab\.outputs\[0\]: expected a record object",
        ),
        "results is an object": (
            {"pii_leakage/results.json": {"rows": results}},
            {},
            r"pii_leakage/results\.json.*expected a list of record objects",
        ),
        "duplicated results file": (
            {},
            {"copy/results.json": _results(src)},
            r"expected one row per .*Is a results file there twice",
        ),
        "dangling score": (
            {"interpretation.json": {"lab": {**lab_doc, "outputs": outputs[:1]}}},
            {},
            r"results\.json, lab\.scores: field 'case_id/model/sample': expected ids present in lab\.outputs",
        ),
        "dangling answer": (
            {"interpretation.json": {"lab": {**lab_doc, "cases": lab_doc["cases"][:1]}}},
            {},
            r"lab\.outputs: field 'case_id': expected ids present in lab\.cases",
        ),
        "null case_id": (
            {
                "interpretation.json": {
                    "lab": {**lab_doc, "cases": [{**lab_doc["cases"][0], "case_id": None}]}
                }
            },
            {},
            r"lab\.cases\[0\]: field 'case_id': expected an id, found null",
        ),
        "repeated case": (
            {"interpretation.json": {"lab": {**lab_doc, "cases": lab_doc["cases"] * 2}}},
            {},
            r"lab\.cases\[2\]: field 'case_id': expected one row per",
        ),
        "bad JSON": ({}, {}, ""),
    }
    for name, (edit, extra, error) in bad.items():
        if name == "bad JSON":
            continue
        path = _rewrite(src, tmp_path / f"{len(error)}.zip", edit, extra)
        with pytest.raises(evalnb.InputError, match=error):
            evalnb.load(path)
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(broken, "w") as zf:
        zf.writestr("interpretation.json", '{"lab": ')
    with pytest.raises(evalnb.InputError, match=r"broken\.zip:interpretation\.json, line 1"):
        evalnb.load(broken)


def test_archive_repeated_member_and_size_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _archive(tmp_path)
    twice = tmp_path / "twice.zip"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(twice, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info.filename))
        with pytest.warns(UserWarning, match="Duplicate name"):
            zout.writestr("pii_leakage/results.json", _results(src))
    with pytest.raises(evalnb.InputError, match=r"results\.json': expected each member once"):
        evalnb.load(twice)
    monkeypatch.setattr(evalnb.io.archive, "MAX_UNZIPPED_BYTES", 1000)
    with pytest.raises(evalnb.InputError, match="expected at most 1,000 bytes unzipped"):
        evalnb.load(src)


def test_zip_bomb_is_refused_without_inflating(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("interpretation.json", '{"lab": {}}')
        with zf.open("pii_leakage/results.json", "w", force_zip64=True) as member:
            chunk = b" " * (1 << 20)
            for _ in range(512):  # 512 MB of spaces, about 0.5 MB deflated
                member.write(chunk)
    assert bomb.stat().st_size < 2 << 20
    code = textwrap.dedent(
        f"""
        import resource, sys
        import evalnb
        with open("/proc/self/status") as status:
            kb = next(int(l.split()[1]) for l in status if l.startswith("VmSize:"))
        limit = kb * 1024 + (256 << 20)  # inflating the member would need 512 MB more
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        try:
            evalnb.load({str(bomb)!r})
        except evalnb.InputError as exc:
            print(exc)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "bomb.zip: field 'pii_leakage/results.json': expected a compression ratio" in done.stdout


_ARCHIVE_FUZZ = settings(
    max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck)
)


def test_mutated_archives_fail_cleanly(tmp_path: Path) -> None:
    src = _archive(tmp_path)
    interp, results = _interp(src), json.loads(_results(src))
    outcomes = {"ok": 0, "rejected": 0}

    @_ARCHIVE_FUZZ
    @given(
        data=st.data(), which=st.sampled_from(["interpretation.json", "pii_leakage/results.json"])
    )
    def check(data: st.DataObject, which: str) -> None:
        doc = interp if which == "interpretation.json" else results
        mutated = mutate_tree(data, json.loads(json.dumps(doc)))
        path = _rewrite(src, tmp_path / "m.zip", {which: mutated}, {})
        try:
            evalnb.load(path)
        except evalnb.InputError as exc:
            outcomes["rejected"] += 1
            named = "m.zip" in str(exc)
        else:
            outcomes["ok"] += 1
            named = True
        assert named, "an archive's error names the archive"

    check()
    assert outcomes["rejected"] > 0


def test_archive_with_a_huge_integer_id_is_an_input_error(tmp_path: Path) -> None:
    """Found by the fuzzer above: an id too large for any Polars integer type."""
    src = _archive(tmp_path)
    results = json.loads(_results(src))
    rows = results if isinstance(results, list) else next(iter(results.values()))
    rows[0]["case_id"] = 10**400
    path = _rewrite(src, tmp_path / "huge.zip", {"pii_leakage/results.json": results}, {})
    with pytest.raises(evalnb.InputError, match=r"huge\.zip"):
        evalnb.load(path)


# --- leakage on hostile texts ---------------------------------------------------------------


def test_leakage_on_hostile_megabyte_texts() -> None:
    texts = adversarial_texts()
    lab = evalnb.load(pl.DataFrame({"prompt": list(texts), "actual": list(texts.values())}))
    start = time.perf_counter()
    scored = evalnb.evaluate(lab, ["pii_leakage", "sensitive_data_leakage"], progress=False)
    # 17 texts of 1 MB; finditer on H2O's patterns needs hours. A bound, not a benchmark.
    assert time.perf_counter() - start < 60
    passes = scored.scores.filter(pl.col("metric") == "model_passes")
    assert passes.height == 2 * len(texts)
    leaked = set(passes.filter(pl.col("value") == 0.0)["case_id"].to_list())
    by_prompt = dict(zip(lab.cases["case_id"], lab.cases["prompt"], strict=True))
    assert {by_prompt[c] for c in leaked} >= {
        "e-mail-like words",
        "BEGIN/END pairs",
        "SSN candidates, one per line",
    }
