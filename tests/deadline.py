"""How long a test waits for one run of a page before it calls the run stuck (AppTest's
default_timeout). A deadline, never a speed claim: generous, because a 2-core machine with two busy
processes beside the suite runs a page many times slower than a quiet one (a similarity map took
168 s there, against about 10 s quiet). How fast a page is belongs to bench/."""

APPTEST_DEADLINE = 900  # seconds
# The same for a browser test's every wait (a chart drawn, a link changed, a heading shown): Playwright
# counts milliseconds. One figure for all, never a shorter one: a loaded run of the suite failed when
# the cost page took more than 60 s to take a typed text, and the train page to draw its first chart.
BROWSER_DEADLINE_MS = APPTEST_DEADLINE * 1000
