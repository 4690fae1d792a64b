"""The hosted demo's line about a whole class on SmolLM2 (dashboard/hosted.py, room_note): written
from the classroom benchmark's figures, and only when they miss the issue's bounds."""

from __future__ import annotations

from dataclasses import replace

from dashboard.hosted import SMOLLM2_ROOM, RoomMeasured, room_note

FITS = RoomMeasured(students=30, peak_mb=650, own_p95_s=12.0, errors=0, preset_p95_s=1.0)


def test_a_room_that_fits_gets_no_line():
    assert room_note(FITS) is None


def test_the_line_says_each_figure_that_missed_and_only_those():
    memory = room_note(replace(FITS, peak_mb=1234))
    assert "1,234 MB of the demo's 690 MB" in memory and "own sentences" not in memory
    slow = room_note(replace(FITS, own_p95_s=21.4))
    assert "over 21 s" in slow and "MB" not in slow
    both = room_note(replace(FITS, peak_mb=800, own_p95_s=20.0, errors=2))
    assert "800 MB" in both and "over 20 s" in both and "2 of their clicks failed" in both
    assert all("30 students" in said for said in (memory, slow, both))
    assert "teacher's example" in room_note(replace(FITS, preset_p95_s=4.2))
    assert room_note(replace(FITS, preset_p95_s=None)) is None  # not measured: not said


def test_the_shipped_figures_decide_whether_the_demo_says_it():
    assert (room_note() is None) == SMOLLM2_ROOM.holds()
