"""SimPy reference for `fsmeta bench --simpy PYTHON` (issue 35): the
M/M/1//N model of benches/mm1n.toml, N = 16 sources that think for
Exp(10 us) and then hold one FIFO server (simpy.Resource) for Exp(1 us).

Usage: python3 simpy_mm1n.py COMPLETIONS SEED
Prints one line, `completions_per_cpu_sec X`: completions over the
process's CPU seconds of the simulation alone (time.process_time).
"""
import random
import sys
import time

import simpy

THINK_NS = 10_000.0
SERVICE_NS = 1_000.0
SOURCES = 16


def main():
    completions = int(sys.argv[1])
    rng = random.Random(int(sys.argv[2]))
    env = simpy.Environment()
    server = simpy.Resource(env, capacity=1)
    done = [0]
    finished = env.event()

    def source():
        while True:
            yield env.timeout(rng.expovariate(1.0 / THINK_NS))
            with server.request() as req:
                yield req
                yield env.timeout(rng.expovariate(1.0 / SERVICE_NS))
            done[0] += 1
            if done[0] == completions and not finished.triggered:
                finished.succeed()

    for _ in range(SOURCES):
        env.process(source())
    start = time.process_time()
    env.run(until=finished)
    cpu = max(time.process_time() - start, 1e-9)
    print(f"completions_per_cpu_sec {completions / cpu:.1f}")


if __name__ == "__main__":
    main()
