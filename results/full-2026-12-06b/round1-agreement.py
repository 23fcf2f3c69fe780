"""Round 1 of two runs, cell by cell: the best round-1 level's throughput.

    python3 round1-agreement.py RUN_A RUN_B

For every product and scenario with a complete round-1 step (SCENARIO-cN.json,
error rate below 0.01%) in both runs: the best level's qps and connections in
each, and B's difference from A; then the median absolute difference, how
many cells agree within 5% and 10%, and how many have the same best level.
"""
import glob
import json
import statistics
import sys

PRODUCTS = ["refop", "hydra", "keycloak", "spring", "nodeoidc"]
SCENARIOS = ["discovery", "client_credentials", "client_credentials_login", "jwt_bearer",
             "introspect", "auth_code", "refresh", "userinfo"]


def best(run, product, scenario):
    levels = []
    for path in glob.glob(f"{run}/{product}/{scenario}-c*.json"):
        tail = path.rsplit("/", 1)[1][len(scenario) + 2:-len(".json")]
        if not tail.isdigit():  # a later round's -r2, a share's file
            continue
        step = json.load(open(path))
        if step.get("status") == "complete" and step.get("error_rate", 1) < 0.0001:
            levels.append((step["qps"], step["connections"]))
    return max(levels) if levels else None


def main(a_run, b_run):
    diffs, same = [], 0
    for p in PRODUCTS:
        for s in SCENARIOS:
            a, b = best(a_run, p, s), best(b_run, p, s)
            if not a or not b:
                continue
            d = (b[0] / a[0] - 1) * 100
            diffs.append(abs(d))
            same += a[1] == b[1]
            print(f"{p:9s} {s:25s} {a[0]:10.1f} c={a[1]:<4d} {b[0]:10.1f} c={b[1]:<4d} {d:+6.1f}%")
    print(f"cells {len(diffs)}; median |difference| {statistics.median(diffs):.1f}%; "
          f"within 5%: {sum(x <= 5 for x in diffs)}; within 10%: {sum(x <= 10 for x in diffs)}; "
          f"same best level: {same}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
