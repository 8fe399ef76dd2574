"""The progress lines of a long render (kane.viz.screenshots.FrameProgress), on a clock the test sets."""

from kane.viz.screenshots import FrameProgress


def test_progress_says_the_first_and_last_frame_and_every_few_seconds_between():
    now = [100.0]
    lines = []
    progress = FrameProgress(lines.append, every_s=3.0, clock=lambda: now[0])
    for k in range(1, 61):  # 60 frames, 0.4 s each
        now[0] += 0.4
        progress(k, 60)
    assert lines[0] == "rendering frames: 1 of 60 (2 %), 0 s"
    assert lines[-1] == "rendering frames: 60 of 60 (100 %), 24 s"  # (60 - 1) x 0.4 s after the first
    # one line per 3 s: after the first at frames 9 (3.2 s), 17, 25, ..., 57, and the last
    assert [int(line.split()[2]) for line in lines] == [1, 9, 17, 25, 33, 41, 49, 57, 60]
