"""Progress lines off a terminal (issue 39): no "0.0%" lines that never move, and a log gets few lines
(the gap between lines doubles, up to ``max_line_interval``)."""
import io

from numerics.progress import Progress


def _lines(bar, stream):
    return [ln for ln in stream.getvalue().splitlines() if ln]


def test_a_fraction_still_at_zero_prints_no_percentage():
    stream = io.StringIO()
    bar = Progress("sim", stream=stream, mode="lines")
    bar.line_interval = 0.0
    bar.update(0.0, "warming up")
    bar.update(0.25)
    lines = _lines(bar, stream)
    assert lines[0].startswith("[sim] running") and "0.0%" not in lines[0]
    assert lines[1].startswith("[sim]  25.0%")


def test_line_gaps_double_off_a_terminal(monkeypatch):
    import numerics.progress as progress

    clock = [0.0]
    monkeypatch.setattr(progress.time, "perf_counter", lambda: clock[0])
    stream = io.StringIO()
    bar = Progress("sim", stream=stream, mode="lines")
    written = []
    for second in range(1, 601):  # ten minutes of updates once a second
        clock[0] = float(second)
        before = len(_lines(bar, stream))
        bar.update(second / 1000)
        if len(_lines(bar, stream)) > before:
            written.append(second)
    # 10, 30, 70, 150, 270, 390, 510: gaps 20, 40, 80 then capped at 120 s; a fixed 10 s gap gave 60 lines
    assert written == [10, 30, 70, 150, 270, 390, 510]
