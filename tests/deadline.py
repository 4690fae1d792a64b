"""How long a test waits for one run of a page before it calls the run stuck (AppTest's
default_timeout). A deadline, never a speed claim: generous, because a 2-core machine with two busy
processes beside the suite runs a page many times slower than a quiet one (a similarity map took
168 s there, against about 10 s quiet). How fast a page is belongs to bench/."""

APPTEST_DEADLINE = 900  # seconds
