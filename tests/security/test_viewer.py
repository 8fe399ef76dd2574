"""Issue 27, items 3 and 4: a data file never runs code, and the viewer admits only its user.

A hostile run file names, in its description, a Python script that would create a marker file: `kane view` (the
scene built without serving: --gif, and the served path), `kane info` and `kane plot` never create it; the same
script given by the user with --model does (so the marker would show a run), and on a terminal it runs only on a
yes. The viewer's server, started in-process on a free loopback port and spoken to with the `websockets` client
library: a foreign Origin, a foreign Host, no token and a wrong token get HTTP 403; the printed URL's token (in the
query, or in the cookie its page sets) gets the scene."""

import asyncio
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import msgspec
import numpy as np
import pytest
import viser
import websockets
import zstandard
from click.testing import CliRunner

import kane
import kane.viz.command as view_command
from kane.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _view_process import start_view  # noqa: E402
from kane.errors import ArgumentError
from kane.viz.guard import is_loopback
from kane.viz.viewer import Viewer, ViewOptions, open_run

CHAIN = Path(__file__).resolve().parents[2] / "examples" / "planar_chain.toml"
NAMES_Q, NAMES_U = tuple(f"q{i}" for i in range(1, 8)), tuple(f"u{i}" for i in range(1, 8))


def chain_run(path: Path, description: str) -> Path:
    """A five-sample run of the planar chain (joint angles 0.1 k t [rad]) with ``description``."""
    t = np.linspace(0.0, 1.0, 5)
    q = np.outer(t, 0.1 * np.arange(1, 8))
    kane.Trajectory(t, q, np.zeros_like(q), q_names=NAMES_Q, u_names=NAMES_U, description=description).save(path)
    return path


@pytest.fixture
def hostile(tmp_path):
    """(run file naming evil.py next to it, the script, the marker the script would create)."""
    marker = tmp_path / "ran.txt"
    script = tmp_path / "evil.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('the data file ran me')\n")
    return chain_run(tmp_path / "run.h5", "planar_chain (evil.py)"), script, marker


def _kane(*args, stdin=None):
    result = CliRunner().invoke(main, [*map(str, args)], input=stdin)
    return result.exit_code, result.output


def test_a_hostile_description_never_runs_its_script(hostile, tmp_path):
    run, script, marker = hostile
    code, out = _kane("view", run, "--gif", tmp_path / "x.gif")  # builds the scene, serves nothing
    assert code == 2 and repr(str(script.resolve())) in out and "never runs a script named in a data file" in out
    assert f"--model {str(script)!r}" in " ".join(out.split())
    code, out = _kane("view", run, "--port", "0")  # the served path refuses before serving
    assert code == 2 and "--model" in out and "kane view: open" not in out
    absolute = chain_run(tmp_path / "absolute.h5", f"planar_chain ({script})")
    assert _kane("view", absolute, "--gif", tmp_path / "y.gif")[0] == 2
    code, out = _kane("info", run)
    assert code == 0 and "planar_chain (evil.py)" in out
    assert _kane("plot", run, "-o", tmp_path / "run.png")[0] == 0 and (tmp_path / "run.png").stat().st_size > 0
    with pytest.raises(ArgumentError, match="--model"):
        open_run(run)  # the API's path (notebook.show_run, screenshots): the TOML reader, no consent
    with pytest.raises(ArgumentError, match="--model"):
        open_run(run, load_model=lambda p: pytest.fail(f"loaded {p}"), script_consent=lambda p: False)
    assert not marker.exists()
    # the control: the user naming the same script runs it (it defines no system, hence the error after)
    code, out = _kane("view", run, "--model", script, "--gif", tmp_path / "z.gif")
    assert marker.read_text() == "the data file ran me" and code == 2 and "'system'" in out


def test_on_a_terminal_the_script_runs_only_on_yes(hostile, tmp_path, monkeypatch):
    run, script, marker = hostile
    monkeypatch.setattr(view_command, "on_terminal", lambda: True)
    for answer in ("n\n", "\n", "maybe\nno\n"):
        code, out = _kane("view", run, "--gif", tmp_path / "x.gif", stdin=answer)
        assert code == 2 and repr(str(script.resolve())) in out and "[y/N]" in out and not marker.exists()
    code, out = _kane("view", run, "--gif", tmp_path / "x.gif", stdin="y\n")
    assert marker.exists() and "'system'" in out


def test_a_model_file_named_in_a_run_is_read_by_the_toml_reader_alone(tmp_path):
    run = chain_run(tmp_path / "chain.h5", f"planar_chain ({CHAIN})")
    opened = open_run(run, load_model=lambda p: pytest.fail(f"the script loader was given {p}"))
    assert opened.loaded.name == "planar_chain" and opened.trajectory.q_names == NAMES_Q
    np.testing.assert_allclose(opened.trajectory.q[-1], 0.1 * np.arange(1, 8))


# ---- the server admits only its user -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def viewer(tmp_path_factory):
    run = chain_run(tmp_path_factory.mktemp("guard") / "chain.h5", f"planar_chain ({CHAIN})")
    v = Viewer(open_run(run).scene(), ViewOptions(port=0))
    yield v
    v.close()


def _messages(frame: bytes) -> list:
    """The messages of one viser frame: 8 bytes msgpack size, 8 bytes compressed size, zstd-compressed msgpack."""
    size = int.from_bytes(frame[8:16], "little")
    return msgspec.msgpack.decode(zstandard.decompress(frame[16:16 + size]))["messages"]


def _connect(url, **options):
    """('accepted', the scene node names received) or ('refused', HTTP status)."""

    async def go():
        try:
            async with websockets.connect(url, subprotocols=[f"viser-v{viser.__version__}"], open_timeout=20,
                                          **options) as ws:
                names = set()
                deadline = time.monotonic() + 20
                while "/bodies/link7" not in names and time.monotonic() < deadline:
                    names |= {m.get("name") for m in _messages(await asyncio.wait_for(ws.recv(decode=False), 20))}
                return "accepted", names
        except websockets.exceptions.InvalidStatus as exc:
            return "refused", exc.response.status_code

    return asyncio.run(go())


def test_only_the_printed_urls_token_with_this_origin_and_host_gets_the_scene(viewer):
    port = viewer.port
    parts = urlsplit(viewer.url)
    assert parts.scheme == "http" and parts.hostname == "127.0.0.1" and parts.port == port != 0
    token = parse_qs(parts.query)["token"][0]
    assert len(token) >= 40  # secrets.token_urlsafe(32): 256 bits
    ws, own = f"ws://127.0.0.1:{port}/", f"http://127.0.0.1:{port}"
    assert _connect(f"{ws}?token={token}", origin="http://evil.example") == ("refused", 403)
    assert _connect(f"{ws}?token={token}", origin=f"http://127.0.0.1:{port + 1}") == ("refused", 403)
    assert _connect(f"{ws}?token={token}", additional_headers={"Host": f"evil.example:{port}"}) == ("refused", 403)
    assert _connect(ws, origin=own) == ("refused", 403)
    assert _connect(f"{ws}?token={token[:-1]}x", origin=own) == ("refused", 403)
    assert _connect(ws, origin=own, additional_headers={"Cookie": f"kane-view-{port}=wrong"}) == ("refused", 403)
    verdict, scene = _connect(f"{ws}?token={token}", origin=own)
    assert verdict == "accepted" and {f"/bodies/link{i}" for i in range(1, 8)} <= scene
    verdict, scene = _connect(f"ws://localhost:{port}/", origin=f"http://localhost:{port}",
                              additional_headers={"Cookie": f"other=1; kane-view-{port}={token}"})
    assert verdict == "accepted" and "/bodies/link7" in scene


def test_http_needs_the_host_and_the_token_and_the_page_sets_the_cookie(viewer):
    port = viewer.port
    with urllib.request.urlopen(viewer.url, timeout=20) as page:
        cookie = page.headers["Set-Cookie"]
        assert page.status == 200 and b"<html" in page.read(2000).lower()
    token = parse_qs(urlsplit(viewer.url).query)["token"][0]
    assert cookie.startswith(f"kane-view-{port}={token};") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    for url, headers in ((f"http://127.0.0.1:{port}/", {}), (viewer.url, {"Host": f"evil.example:{port}"}),
                         (viewer.url, {"Origin": "http://evil.example"})):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=20)
        assert refused.value.code == 403 and b"refused" in refused.value.read()


def test_listening_beyond_loopback_is_explicit_and_warns(tmp_path):
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.7") and not is_loopback("example.org")
    run = chain_run(tmp_path / "chain.h5", f"planar_chain ({CHAIN})")
    proc, lines = start_view([run, "--host", "0.0.0.0", "--port", "0"])
    try:
        said = [ln.strip() for ln in lines if ln.startswith(("warning", "kane view"))]
        assert said[0].startswith("warning: --host 0.0.0.0: the viewer listens beyond this machine")
        url = said[1].split()[3]
        port, token = urlsplit(url).port, parse_qs(urlsplit(url).query)["token"][0]
        assert _connect(f"ws://127.0.0.1:{port}/", origin=f"http://127.0.0.1:{port}") == ("refused", 403)
        assert _connect(f"ws://127.0.0.1:{port}/?token={token}")[0] == "accepted"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
