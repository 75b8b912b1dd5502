# memrecall tasks. `uv run just --list` shows them (just comes with the dev dependencies).

# the scripted demo on the bundled example tree
demo:
    uv run memrecall demo

# the test suite (the README's test command)
test *ARGS:
    uv run pytest {{ARGS}}

# lint, format check and strict typing
lint:
    uv run ruff check .
    uv run ruff format --check .
    uv run mypy --strict

# timing tables: scoring latency, scan latency (with and without the catalog), user_query return time, the store, actor throughput and idle-session memory
bench:
    uv run python -m memrecall.tooling.bench
    uv run memrecall bench scan
    uv run memrecall bench scan --catalog --sizes 10000
    uv run memrecall bench recall
    uv run python scripts/passage_cost.py
    uv run memrecall bench store
    uv run python -m memrecall.simulation.throughput

# seeded simulations of the real actors on a virtual clock
sim SEED="1" RUNS="20":
    uv run memrecall simulate --seed {{SEED}} --runs {{RUNS}}

# the property tests with the randomised, deep Hypothesis profile (nightly; see docs/simulation.md)
nightly:
    HYPOTHESIS_PROFILE=nightly uv run pytest tests/test_simulations.py tests/test_actor_properties.py tests/test_plan_machine.py

# the evaluation table on the project's labelled corpus
eval:
    uv run memrecall eval --corpus tests/fixtures/recall-eval.json

# what CI runs
ci:
    bash .ci/run

# mutation testing of the plan machine, the safety rules and the judgement (mutmut, in a copy of
# the tree, one file at a time; minutes, not part of CI), then the hand-planted mutants of
# docs/testing.md (each run prints its survivors; "-": one with survivors does not stop the next)
mutate:
    -uv run python scripts/mutate.py --target plan
    -uv run python scripts/mutate.py --target safety
    -uv run python scripts/mutate.py --target judgement
    uv run python scripts/mutants.py

# the page's screenshot (docs/img/page.png), taken in headless Chromium (bash .ci/install-browser)
screenshot:
    MEMRECALL_SCREENSHOT={{justfile_directory()}}/docs/img/page.png MEMRECALL_REQUIRE_BROWSER=1 uv run pytest tests/http/test_browser_page.py -q -k screenshot

# the blind sets' floors with the embedding engine's expf and erff rounded another way
# (scripts/other_libm.c; a C compiler and Linux): what a machine whose arithmetic differs sees
other-libm:
    mkdir -p build
    cc -O2 -shared -fPIC -o build/other_libm.so scripts/other_libm.c -lm
    LD_PRELOAD={{justfile_directory()}}/build/other_libm.so uv run pytest tests/test_blind_sets.py -q -p no:cacheprovider
