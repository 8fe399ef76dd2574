"""The ``kane view`` command: ``kane view RUN.h5`` plays a run back (:mod:`kane.viz.viewer`), ``kane view MODEL
--live`` simulates a model live with the drag gizmo (:mod:`kane.viz.live`, :mod:`kane.viz.live_view`). The
click command is registered in cli.py.

The printed URL carries the server's token (:mod:`kane.viz.guard`: only its user gets in); ``--host`` beyond
loopback warns. A run made from a Python script is opened with ``--model SCRIPT.py``; without it, the command asks
(y/N) on a terminal and refuses otherwise (:func:`kane.viz.viewer.open_run`: a data file never runs code)."""

from __future__ import annotations

import sys
import time
import warnings

from ..errors import ArgumentError
from ..realtime.command import parse_couple
from ..switching.contact_run import refuse_collisions
from .assemble_view import AssembleSession, AssembleViewer
from .gif import write_gif
from .guard import is_loopback
from .mp4 import write_mp4
from .live import LiveOptions, LiveSimulation
from .live_view import LiveViewer
from .screenshots import FrameProgress
from .viewer import Viewer, ViewOptions, open_run

__all__ = ["ask_to_run_script", "on_terminal", "parse_trace", "view_command"]


def parse_trace(text: str) -> tuple[str, tuple]:
    """``--trace BODY:X,Y,Z`` (or BODY: its origin) -> (body, point (3,) [m] in body axes)."""
    try:
        return parse_couple(text)
    except ArgumentError as exc:
        raise ArgumentError(str(exc).replace("--couple", "--trace", 1)) from None


def _say(line: str) -> None:
    """A progress line on standard error (the result line goes to standard output)."""
    import click

    click.echo(line, err=True)


def on_terminal() -> bool:
    """Whether a person can answer a question: standard input is a terminal."""
    return sys.stdin is not None and sys.stdin.isatty()


def ask_to_run_script(run):
    """``script_consent`` for :func:`kane.viz.viewer.open_run` on a terminal: asks (y/N) whether to run the script
    that the run file ``run`` names, naming its path; anything but yes refuses."""
    import click

    def ask(script) -> bool:
        return click.confirm(f"run {str(run)!r} was made from the Python script {str(script)!r}; viewing it runs "
                             f"that script as you. Run it?", default=False, err=True)

    return ask


def view_command(load_model, errors):
    """The click command ``kane view RUN.h5 [--model MODEL] [--host H] [--port P] [--speed S] [--trace B:X,Y,Z]
    [--gif OUT.gif | --mp4 OUT.mp4] [--frames N]`` (or ``kane view MODEL --live [--couple BODY:X,Y,Z]
    [--record RUN.h5] [--trace B:X,Y,Z]``);
    ``load_model`` reads a model file or script, ``errors`` turns a KaneError into one line and exit status 2."""
    import click

    @click.command(short_help="Play a run back in the browser (viser), or simulate a model live (--live).")
    @click.argument("run", type=click.Path(dir_okay=False))
    @click.option("--model", "model", type=click.Path(dir_okay=False),
                  help="The run's model file or script [default: the model file named in the run, as `kane simulate` "
                  "writes it; a script named in the run is run only if you say so on a terminal].")
    @click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (beyond this "
                  "machine only when asked: anyone who can reach it with the printed URL's token drives the "
                  "viewer).")
    @click.option("--port", default=8080, show_default=True, type=int, help="Port (the next free one if taken).")
    @click.option("--speed", default=1.0, show_default=True, type=float, help="Playback speed.")
    @click.option("--live", is_flag=True, help="RUN is a model file: simulate it live, dragged by the gizmo.")
    @click.option("--couple", metavar="BODY:X,Y,Z", help="With --live: the body point the gizmo pulls "
                  "[default: the model file's [realtime] body and point, else the heaviest body's centre of "
                  "mass].")
    @click.option("--record", default="live.h5", show_default=True, type=click.Path(dir_okay=False),
                  help="With --live: the run file the record checkbox writes.")
    @click.option("--assemble", metavar="BODY[:X,Y,Z]", help="RUN is a model file: drag this body point with the "
                  "gizmo, assembling every frame (the frames go to --record).")
    @click.option("--trace", multiple=True, metavar="BODY:X,Y,Z",
                  help="Draw the path of this body point (repeatable; live: its recent path).")
    @click.option("--gif", type=click.Path(dir_okay=False), help="Write the run as an animated GIF and exit.")
    @click.option("--mp4", type=click.Path(dir_okay=False), help="Write the run as an MP4 video (H.264) and exit.")
    @click.option("--frames", default=40, show_default=True, type=int, help="With --gif or --mp4: the number of "
                  "frames.")
    @click.option("--collisions", is_flag=True, help="Also draw the model's collision shapes (orange).")
    @errors
    def view(run, model, host, port, speed, live, couple, record, trace, gif, mp4, frames, assemble, collisions):
        """Show RUN (an HDF5 file from `kane simulate`; with --live, a model file) in the browser until Ctrl-C."""
        traces = tuple(map(parse_trace, trace))
        if not is_loopback(host):
            click.echo(f"warning: --host {host}: the viewer listens beyond this machine; whoever can reach it and "
                       f"has the printed URL (its token) can see the model and drive it", err=True)
        if assemble:
            viewer = AssembleViewer(AssembleSession(load_model(run), assemble), ViewOptions(host, port), record)
        elif live:
            with warnings.catch_warnings(record=True) as caught:  # the coupler's gains outside their bounds
                warnings.simplefilter("always")
                loaded = load_model(run)
                refuse_collisions(loaded, "kane view --live")  # its live loop has no contact scheme
                simulation = LiveSimulation(loaded, LiveOptions(couple))
            for w in caught:
                click.echo(f"warning: {w.message}", err=True)
            viewer = LiveViewer(simulation, ViewOptions(host, port, traces=traces), record)
        else:
            scene = open_run(run, model, load_model, ask_to_run_script(run) if on_terminal() else None,
                             collisions).scene()
            if gif:
                done = write_gif(scene, gif, frames, speed, progress=FrameProgress(_say))
                return click.echo(f"wrote {done.path}: {done.frames} frames of {done.frame_ms} ms")
            if mp4:
                done = write_mp4(scene, mp4, frames, speed, progress=FrameProgress(_say))
                return click.echo(f"wrote {done.path}: {done.frames} frames at {done.fps:g} per second")
            viewer = Viewer(scene, ViewOptions(host, port, speed, traces=traces))
        if viewer.port != port:
            click.echo(f"port {port} is in use; serving on port {viewer.port}")
        click.echo(f"kane view: open {viewer.url} (Ctrl-C to stop)")
        try:
            while True:
                time.sleep(1.0)
        except KeyboardInterrupt:
            viewer.close()

    return view
