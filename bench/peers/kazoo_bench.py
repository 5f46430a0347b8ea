"""The bench's kazoo peer: the bench scenarios through kazoo's recipes, with the
same critical section as ours (who is inside, checked, then a yield) and the same sizes. One
process for all scenarios, so start-up stays out of the measured time:
  /usr/bin/python3 kazoo_bench.py <connect> <root> <quick|full> [deadline seconds per scenario]
Prints one JSON line per scenario: scenario, ops, opsPerSec, p50Ms, p99Ms, violations. kazoo has
no multi-path lock, so multi-3 is not run.
"""
import json
import os
import sys
import threading
import time

from kazoo.client import KazooClient

DEADLINE_S = int(sys.argv[4]) if len(sys.argv) > 4 else 60
inside = {}
inside_guard = threading.Lock()
violations = [0]


def critical(path, write, limit):
    with inside_guard:
        state = inside.setdefault(path, {"r": 0, "w": 0})
        if write:
            state["w"] += 1
            if state["w"] > 1 or state["r"] > 0:
                violations[0] += 1
        else:
            state["r"] += 1
            if state["r"] > limit or state["w"] > 0:
                violations[0] += 1
    time.sleep(0)  # as ours awaits one turn of the event loop
    with inside_guard:
        state["w" if write else "r"] -= 1


def loop(callers, ops, op, latencies):
    failures = []

    def caller(c):
        try:
            for n in range(ops):
                t0 = time.monotonic_ns()
                op(c, n)
                if latencies is not None:
                    latencies.append(time.monotonic_ns() - t0)
        except Exception as e:  # reported after the threads end
            failures.append(e)

    threads = [threading.Thread(target=caller, args=(c,), daemon=True) for c in range(callers)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + DEADLINE_S
    for t in threads:
        t.join(max(0, deadline - time.monotonic()))
    if any(t.is_alive() for t in threads):
        raise TimeoutError("did not finish within %d s" % DEADLINE_S)
    if failures:
        raise failures[0]


def run(scenario, callers, ops, warmup, op):
    violations[0] = 0
    latencies = []
    try:
        loop(callers, warmup, op, None)
        started = time.monotonic_ns()
        loop(callers, ops, op, latencies)
    except Exception as e:  # a hang or an error: a row that says so, then the next scenario
        print(json.dumps({"scenario": scenario, "error": str(e)}), flush=True)
        return
    seconds = (time.monotonic_ns() - started) / 1e9
    latencies.sort()
    n = len(latencies)
    print(json.dumps({
        "scenario": scenario,
        "ops": n,
        "opsPerSec": round(n / seconds, 1),
        "p50Ms": round(latencies[n // 2] / 1e6, 3),
        "p99Ms": round(latencies[min(n - 1, int(n * 0.99))] / 1e6, 3),
        "violations": violations[0],
    }), flush=True)


def held(lock, path, write, limit):
    with lock:
        critical(path, write, limit)


def main():
    connect, root, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    div = 10 if mode == "quick" else 1
    size = lambda ops: max(5, ops // div)
    zk = KazooClient(hosts=connect, timeout=10.0)
    zk.start()
    try:
        solo = zk.Lock(root + "/uncontended")
        run("uncontended", 1, size(2000), max(2, 3000 // div),
            lambda c, n: held(solo, root + "/uncontended", True, 1))
        same = [zk.Lock(root + "/same-key-1p") for _ in range(32)]
        run("same-key-1p", 32, size(500), 2,
            lambda c, n: held(same[c], root + "/same-key-1p", True, 1))
        many = [zk.Lock("%s/many-keys/k%d" % (root, i)) for i in range(32)]
        run("many-keys", 32, size(100), max(2, 100 // div),
            lambda c, n: held(many[c], "%s/many-keys/k%d" % (root, c), True, 1))
        readers = [zk.ReadLock(root + "/rw-read-heavy") for _ in range(32)]
        writers = [zk.WriteLock(root + "/rw-read-heavy") for _ in range(32)]

        def rw(c, n):
            write = (c + n) % 10 == 0
            held(writers[c] if write else readers[c], root + "/rw-read-heavy", write, 1 << 30)

        run("rw-read-heavy", 32, size(200), 2, rw)
        semaphores = [zk.Semaphore(root + "/semaphore-4", max_leases=4) for _ in range(32)]
        run("semaphore-4", 32, size(50), 2,
            lambda c, n: held(semaphores[c], root + "/semaphore-4", False, 4))
    finally:
        sys.stdout.flush()
        os._exit(0)  # threads of a scenario that hung may still wait on the session


if __name__ == "__main__":
    main()
