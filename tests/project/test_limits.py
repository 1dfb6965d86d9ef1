"""Issue 32: hostile inputs and faults end in a result or a clear evalnb error, within bounds.

Each test reproduces one reported defect class: saves on a full disk (a real tmpfs), readers
of non-regular files, structure bombs, archives of many members, regex caches, LLM calls
that never end or never stop sending, conditions too deep for recursion, calibration
bundles with impossible values, odd usage counts and keys echoed back.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tmpfs_runner() -> list[str] | None:
    """A command prefix running a child with a private 40 MB tmpfs on /mnt, or None."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    probe = subprocess.run(
        [unshare, "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"],
        capture_output=True,
        check=False,
    )
    return [unshare, "-rm", "sh", "-c"] if probe.returncode == 0 else None


FULL_DISK = textwrap.dedent("""
    import os, sys
    import polars as pl
    import evalnb
    from evalnb.lab.errors import StoreError
    folder, free, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    lab = evalnb.load(pl.DataFrame({"prompt": [f"question {i} " * 20 for i in range(rows)],
                                    "actual": [f"answer {i} " * 30 for i in range(rows)]}))
    st = os.statvfs(folder)
    with open(os.path.join(folder, "filler"), "wb") as f:
        f.write(b"x" * max(0, st.f_bavail * st.f_frsize - free))
    target = os.path.join(folder, "lab.duckdb")
    try:
        lab.save(target)
        reopened = evalnb.open(target)
        print("SAVED", reopened.cases.height)
    except StoreError as exc:
        print("REFUSED", exc)
    print("FILES", sorted(os.listdir(folder)))
""")


@pytest.mark.parametrize(("free", "rows"), [(250_000, 30), (1_000_000, 30), (1_500_000, 300)])
def test_a_save_on_a_full_disk_says_so_and_leaves_no_file(free: int, rows: int) -> None:
    runner = _tmpfs_runner()
    if runner is None:
        pytest.skip("no private tmpfs here (unshare -rm and mount refused)")
    script = (
        f'mount -t tmpfs -o size=40m tmpfs /mnt && exec {sys.executable} -c "$0" /mnt {free} {rows}'
    )
    done = subprocess.run(
        [*runner, script, FULL_DISK],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr[-2000:]
    # Before: save returned and the store reopened empty ("no 'evalnb_meta' table").
    if "SAVED" in out:
        assert f"SAVED {rows}" in out  # when it fits, every row is there
    else:
        assert "REFUSED /mnt/lab.duckdb: could not write the lab store: no space left" in out
        assert "nothing was written" in out
        assert "FILES ['filler']" in out  # no store, no temporary file, no WAL


# --- Non-regular files: refused by kind, never read ------------------------------------------

import json  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import zipfile  # noqa: E402

import evalnb  # noqa: E402
from evalnb.io.documents import DocumentLimits, read_document  # noqa: E402


@pytest.mark.parametrize("reader", ["load", "corpus"])
def test_devices_and_fifos_are_refused_by_name(reader: str, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    read = evalnb.load if reader == "load" else evalnb.corpus
    for target, kind in (("/dev/zero", "a character device"), (str(fifo), "a FIFO")):
        start = time.monotonic()
        with pytest.raises(evalnb.InputError) as err:
            read(target)
        assert time.monotonic() - start < 5
        assert str(err.value).startswith(target)
        assert "expected a regular file" in str(err.value) and kind in str(err.value)


def test_a_corpus_folder_does_not_follow_links_out_of_it(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Fees\n\nThe Gold card costs $95 a year.\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("the content of a file outside the corpus folder")
    (folder / "b.txt").symlink_to(outside)
    with pytest.raises(evalnb.InputError, match=r"b\.txt.*outside it.*follow_links=True"):
        evalnb.corpus(folder)
    corpus = evalnb.corpus(folder, follow_links=True)
    assert "outside the corpus folder" in " ".join(corpus.chunks["text"].to_list())


# --- Structure bombs: counted before a parser builds them --------------------------------------


def test_a_markdown_table_of_100k_columns_is_refused_fast(tmp_path: Path) -> None:
    bomb = tmp_path / "table.md"
    columns = 100_000
    rows = "\n".join("| x |" for _ in range(40))
    bomb.write_text(
        "| "
        + " | ".join("h" for _ in range(columns))
        + " |\n|"
        + "---|" * columns
        + "\n"
        + rows
        + "\n"
    )
    start = time.monotonic()
    with pytest.raises(evalnb.InputError, match=r"at most 2,000,000 table cells.*max_table_cells"):
        read_document(bomb)
    assert time.monotonic() - start < 5


@pytest.mark.parametrize(("suffix", "heading"), [(".md", "# h\n"), (".html", "<h2>h</h2>\n")])
def test_hundreds_of_thousands_of_headings_are_refused(
    suffix: str, heading: str, tmp_path: Path
) -> None:
    bomb = tmp_path / f"headings{suffix}"
    bomb.write_text(heading * 300_000)
    with pytest.raises(evalnb.InputError, match=r"at most 50,000 headings"):
        read_document(bomb)
    # Within the budget a document of many headings reads.
    small = tmp_path / f"fine{suffix}"
    small.write_text((heading + ("text\n" if suffix == ".md" else "<p>text</p>\n")) * 500)
    assert len(read_document(small, DocumentLimits())) == 500


def _docx_with(document_xml: bytes, path: Path) -> Path:
    from docx import Document

    Document().save(str(path))
    with zipfile.ZipFile(path) as src:
        members = {i.filename: src.read(i.filename) for i in src.infolist()}
    members["word/document.xml"] = document_xml
    with zipfile.ZipFile(path, "w") as out:
        for name, data in members.items():
            out.writestr(name, data)
    return path


@pytest.mark.parametrize("kind", ["malformed", "deep"])
def test_docx_with_broken_or_deep_xml_is_an_input_error(kind: str, tmp_path: Path) -> None:
    ns = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    if kind == "malformed":
        xml = f"<w:document {ns}><w:body><w:p></w:body>".encode()
    else:
        xml = (
            f"<w:document {ns}><w:body>"
            + "<w:sdt>" * 300
            + "</w:sdt>" * 300
            + "</w:body></w:document>"
        ).encode()
    path = _docx_with(xml, tmp_path / f"{kind}.docx")
    with pytest.raises(evalnb.InputError) as err:
        read_document(path)
    assert err.value.source == str(path) and err.value.field == "word/document.xml"


# --- Archives -------------------------------------------------------------------------------


def _archive(path: Path, members: dict[str, bytes], *, encrypted: bool = False) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    if encrypted:  # zipfile cannot write one: set the "encrypted" flag in both headers
        raw = bytearray(path.read_bytes())
        for magic, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
            where = raw.find(magic)
            raw[where + at] |= 0x1
        path.write_bytes(bytes(raw))
    return path


def test_an_archive_of_many_members_is_refused_in_linear_time(tmp_path: Path) -> None:
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("interpretation.json", "{}")
        for i in range(50_000):
            zf.writestr(f"m{i}", b"")
    start = time.monotonic()
    with pytest.raises(evalnb.InputError, match=r"at most 10,000 members.*50,001 members"):
        evalnb.load(path)
    assert time.monotonic() - start < 10  # the quadratic count took 18 s here


def test_archive_members_with_huge_integers_or_a_password_are_input_errors(
    tmp_path: Path,
) -> None:
    huge = _archive(tmp_path / "huge.zip", {"interpretation.json": b'{"n": ' + b"9" * 5000 + b"}"})
    with pytest.raises(
        evalnb.InputError, match=r"interpretation\.json.*expected JSON Python can hold"
    ):
        evalnb.load(huge)
    locked = _archive(tmp_path / "locked.zip", {"interpretation.json": b"{}"}, encrypted=True)
    with pytest.raises(evalnb.InputError, match=r"interpretation\.json.*an unencrypted member"):
        evalnb.load(locked)


_ = (json, threading)


# --- Regex compile cache: bounded by bytes ----------------------------------------------------


def test_the_compiled_pattern_cache_is_bounded_by_bytes() -> None:
    from evalnb.text import patterns

    def rss_mb() -> float:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    before = rss_mb()
    for i in range(60):  # each ~17 MB compiled: 1 GB if all were kept
        patterns.compile_pattern(f"a{{99990}}b{i}")
    assert patterns.compiled_cache_bytes() <= patterns.MAX_COMPILED_BYTES
    assert rss_mb() - before < 600
    assert patterns.compile_pattern("a{99990}b59").search("a" * 99990 + "b59")


# --- LLM calls: a deadline, a size cap, usage parsed defensively, keys masked -------------------

from evalnb_testkit.llm_server import LoopbackLLM  # noqa: E402

KEY = "sk-test/Secret+Key=0123456789abcdef"


def _client(server: LoopbackLLM, tmp_path: Path, **kw: object) -> evalnb.LLMClient:
    return evalnb.LLMClient(
        server.base_url, "judge", api_key=KEY, cache=tmp_path / "llm.duckdb", max_retries=0, **kw
    )  # type: ignore[arg-type]


def test_a_dripping_server_cannot_hold_a_call_past_its_deadline(tmp_path: Path) -> None:
    with LoopbackLLM() as server:
        start = time.monotonic()
        result = _client(server, tmp_path, timeout_s=2).chat(
            [{"role": "user", "content": "hi [[drip:30]]"}]
        )
        took = time.monotonic() - start
    assert took < 6  # was 94 s for a 5 s timeout
    assert result.content is None and "no complete reply within timeout_s=2 s" in str(result.error)


def test_a_reply_past_the_size_cap_is_refused_while_it_streams(tmp_path: Path) -> None:
    huge = json.dumps({"choices": [{"message": {"content": "x" * 3_000_000}}]}).encode()
    with LoopbackLLM(raw=lambda p: huge if "huge" in p else None) as server:
        client = _client(server, tmp_path, max_reply_bytes=1_000_000)
        first = client.chat([{"role": "user", "content": "huge"}])
        client.chat([{"role": "user", "content": "huge"}])
        assert server.total_calls == 2  # refused replies are not cached
    assert first.content is None
    assert "expected at most max_reply_bytes=1,000,000" in str(first.error)


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": "12", "completion_tokens": 3},
        {"prompt_tokens": [1], "completion_tokens": 3},
        {"prompt_tokens": 1e30, "completion_tokens": 3},
        {"prompt_tokens": float("nan"), "completion_tokens": 3},
        {"prompt_tokens": -5, "completion_tokens": 3},
        "not an object",
    ],
)
def test_odd_usage_becomes_unknown_and_the_answer_is_kept(usage: object, tmp_path: Path) -> None:
    body = json.dumps({"choices": [{"message": {"content": "fine"}}], "usage": usage}).encode()
    with LoopbackLLM(raw=lambda _p: body) as server:
        client = _client(server, tmp_path, prices=(1.0, 1.0))
        result = client.chat([{"role": "user", "content": "q"}])
        again = client.chat([{"role": "user", "content": "q"}])
    assert result.error is None and result.content == "fine"
    assert result.prompt_tokens is None and result.cost is None  # never negative, never NaN
    assert again.cached and again.content == "fine"  # the cache took the row


def test_a_tool_call_or_text_parts_are_not_cached_as_something_else(tmp_path: Path) -> None:
    tool = {
        "choices": [
            {
                "message": {
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "search", "arguments": "{}"},
                        }
                    ],
                }
            }
        ]
    }
    parts = {
        "choices": [
            {
                "message": {
                    "content": [
                        {"type": "text", "text": "Paris"},
                        {"type": "text", "text": " it is."},
                    ]
                }
            }
        ]
    }
    bodies = {"tool": json.dumps(tool).encode(), "parts": json.dumps(parts).encode()}
    with LoopbackLLM(raw=lambda p: bodies.get(p)) as server:
        client = _client(server, tmp_path)
        call = client.chat([{"role": "user", "content": "tool"}])
        client.chat([{"role": "user", "content": "tool"}])
        assert server.calls["tool"] == 2  # not cached as an empty answer
        text = client.chat([{"role": "user", "content": "parts"}])
    assert call.content is None and "a tool call (search) instead of an answer" in str(call.error)
    assert text.content == "Paris it is."  # not the list's repr


def test_a_key_echoed_in_any_encoding_is_masked(tmp_path: Path) -> None:
    import base64
    from urllib.parse import quote

    echoes = {
        "url": quote(KEY, safe=""),
        "base64": base64.b64encode(f"user:{KEY}".encode()).decode(),
        "json": json.dumps(KEY)[1:-1].replace("/", "\\/"),
    }
    for name, echoed in echoes.items():
        body = json.dumps({"error": {"message": f"bad key {echoed}"}}).encode()

        def answer(
            prompt: str, body: bytes = body, echoed: str = echoed
        ) -> bytes | tuple[int, bytes]:
            if prompt == "ok":  # a 200 that echoes the key in the answer
                return json.dumps({"choices": [{"message": {"content": f"key {echoed}"}}]}).encode()
            return 401, body

        with LoopbackLLM(raw=answer) as server:
            client = _client(server, tmp_path / name)
            ok = client.chat([{"role": "user", "content": "ok"}])
            refused = client.chat([{"role": "user", "content": "refused"}])
        assert echoed not in str(ok.content), name
        assert "HTTP 401" in str(refused.error) and echoed not in str(refused.error), name
        cached = (tmp_path / name / "llm.duckdb").read_bytes()
        assert echoed.encode() not in cached and KEY.encode() not in cached, name
        del body


# --- The calibration bundle, validated by value ------------------------------------------------


@pytest.fixture(scope="module")
def bundle_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    from evalnb_testkit.labs import calibrated_lab

    path = calibrated_lab().calibration.export(tmp_path_factory.mktemp("cal") / "cal.json")
    return path, json.loads(path.read_text())


def _edited(bundle: dict[str, object], edit: object) -> dict[str, object]:
    """The bundle edited, and sealed again: these tests are about the values, not the digest."""
    from evalnb.calibration.bundle_check import seal

    copy = json.loads(json.dumps(bundle))
    edit(copy)  # type: ignore[operator]
    return seal(copy)


@pytest.mark.parametrize(
    ("edit", "where", "expected"),
    [
        (
            lambda b: b["metrics"][0].update(threshold=float("nan")),
            r"\$\.metrics\[0\]\.threshold",
            "a finite threshold",
        ),
        (
            lambda b: b["metrics"][0].update(threshold=float("inf")),
            r"\$\.metrics\[0\]\.threshold",
            "a finite threshold",
        ),
        (
            lambda b: b["metrics"][0].update(n_labels=-5),
            r"\$\.metrics\[0\]\.n_labels",
            "a count >= 0",
        ),
        (lambda b: b["metrics"][0].update(ci=[0.9, 0.1]), r"\$\.metrics\[0\]\.ci", "low <= high"),
        (
            lambda b: b["metrics"].append(b["metrics"][0]),
            r"\$\.metrics\[1\]",
            r"each \(evaluator, metric\) once",
        ),
        (lambda b: b["lab"].update(cases=-1), r"\$\.lab\.cases", "a count >= 0"),
    ],
)
def test_a_bundle_with_impossible_values_is_refused_naming_the_field(
    bundle_file: tuple[Path, dict[str, object]],
    edit: object,
    where: str,
    expected: str,
    tmp_path: Path,
) -> None:
    from evalnb_testkit.labs import synthetic_lab

    _, bundle = bundle_file
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(_edited(bundle, edit)))  # NaN and Infinity as JSON spells them
    lab, _ = synthetic_lab(100, seed=3)
    with pytest.raises(evalnb.InputError, match=rf"edited\.json, {where}: .*expected {expected}"):
        evalnb.load_calibration(path, lab)
    assert lab.thresholds.height == 0  # nothing applied


def test_a_threshold_outside_the_metrics_range_is_refused(
    bundle_file: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    from evalnb_testkit.labs import synthetic_lab

    _, bundle = bundle_file
    path = tmp_path / "far.json"
    path.write_text(json.dumps(_edited(bundle, lambda b: b["metrics"][0].update(threshold=7.5))))
    lab, _ = synthetic_lab(100, seed=3)
    with pytest.raises(evalnb.InputError, match=r"threshold.*within \[0\.0, 1\.0\].*7\.5"):
        evalnb.load_calibration(path, lab)


@pytest.mark.parametrize(
    ("content", "found"),
    [
        (b"\xff\xfe{}", "UTF-8"),
        (b"[" * 5000 + b"]" * 5000, "nested < 1000 levels"),
        (b'{"n": ' + b"9" * 5000 + b"}", "digits"),
        (None, "a directory"),
    ],
)
def test_a_bundle_file_that_is_not_json_is_an_input_error(
    content: bytes | None, found: str, tmp_path: Path
) -> None:
    from evalnb_testkit.labs import synthetic_lab

    path = tmp_path / "bundle.json"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    lab, _ = synthetic_lab(20, seed=3)
    with pytest.raises(evalnb.InputError, match=found):
        evalnb.load_calibration(path, lab)


# --- Property-based fuzz of every reader, in a child with a memory cap --------------------------


def test_every_reader_ends_in_a_result_or_an_input_error_under_limits(tmp_path: Path) -> None:
    import resource

    import polars as pl

    seed = evalnb.evaluate(
        evalnb.load(
            pl.DataFrame({"prompt": ["q1", "q2"], "actual": ["a", "b"], "expected": [["a"], ["c"]]})
        ),
        ["text_matching"],
        progress=False,
    ).archive(tmp_path / "seed.zip")

    cap = 3 << 30  # 3 GiB of address space: a bomb that escapes its budget dies here

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    examples = "300" if os.environ.get("CI") else "60"
    done = subprocess.run(
        [sys.executable, "-m", "evalnb_testkit.bounded_fuzz"],
        cwd=ROOT,
        env={
            **os.environ,
            "EVALNB_FUZZ_EXAMPLES": examples,
            "EVALNB_FUZZ_ARCHIVE": str(seed),
            "PYTHONPATH": str(ROOT),
        },
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert "every one a result or an InputError" in done.stdout
