"""Model files with [[switching]] tables shared by the tests of kane simulate (tests/switching/test_command.py),
the live viewer (tests/viz/test_live_switching.py) and sweeps (tests/sweep/test_switched.py): two blocks latched
together for a while, and a block pushed along a floor with Coulomb friction."""

BLOCKS = """
[model]
name = "blocks"

[parameters]
mA = 2.0
mB = 3.0
t_on = 0.5                      # the latch closes at t_on [s]

[[bodies]]
name = "A"
mass = "mA"
particle = true

[[bodies]]
name = "B"
mass = "mB"
particle = true

[[joints]]
name = "rail_a"
parent = "ground"
child = "A"
type = "prismatic"
axis = "x"
coordinates = ["xa"]
speed_names = ["va"]
u0 = [1.5]

[[joints]]
name = "rail_b"
parent = "ground"
child = "B"
type = "prismatic"
axis = "x"
coordinates = ["xb"]
speed_names = ["vb"]
q0 = [1.0]
u0 = [-0.5]

[[constraints]]
name = "latch"                  # the blocks move together while it holds
type = "motion"
rows = ["va - vb"]
transient = true

[[switching]]
type = "lock"
constraint = "latch"
on = [["t_on", "t_on + 0.75"]]

[simulation]
t_end = 2.0
"""

SLIDER = """
[model]
name = "slider"
gravity = [0, 0, "-g"]

[parameters]
m = 2.0
g = 9.81
c = 1.0                          # the push grows as c t [N/s]
mus = 0.3                        # the static friction coefficient

[inputs]
F = "c*t"

[[bodies]]
name = "block"
mass = "m"
particle = true

[[joints]]
name = "floor"
parent = "ground"
child = "block"
type = "prismatic"
axis = "x"
coordinates = ["x"]
speed_names = ["v"]
u0 = [2.0]

[[loads]]
type = "force"
body = "block"
vector = ["F", 0, 0]

[[constraints]]
name = "grip"                    # the block held on the floor: its slip velocity v = 0
type = "motion"
rows = ["v"]
transient = true

[[switching]]
type = "coulomb"
constraint = "grip"
normal = "m*g"
mu_s = "mus"
mu_k = 0.25

[simulation]
t_end = 7.0
"""
