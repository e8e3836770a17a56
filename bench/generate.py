"""Deterministic TSBS "devops cpu-only" data (bench/README.md).

N hosts, each with 10 tags and 10 metrics that follow bounded random walks
in [0, 100], one reading per host every 10 s, time-major like TSBS. The
metrics have 2 decimals (steps uniform in [-5, 5]), or are TSBS's own
integers (decimals=0: normal steps of sigma 1, written truncated).
Writes three files with the same readings:
  cpu.ndjson     one document per line: {"time", "tags": {...}, metrics}
  cpu_jsonb.tsv  time, tags (JSON), metrics (JSON), tab-separated
  cpu_typed.csv  time, 10 tags, 10 metrics
"""

import datetime
import json
import os
import random

START = datetime.datetime(2016, 1, 1, tzinfo=datetime.timezone.utc)
INTERVAL_SECONDS = 10
TAGS = ["hostname", "region", "datacenter", "rack", "os", "arch", "team",
        "service", "service_version", "service_environment"]
METRICS = ["usage_user", "usage_system", "usage_idle", "usage_nice", "usage_iowait",
           "usage_irq", "usage_softirq", "usage_steal", "usage_guest", "usage_guest_nice"]
REGIONS = {
    "us-east-1": ["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1e"],
    "us-west-1": ["us-west-1a", "us-west-1b"],
    "us-west-2": ["us-west-2a", "us-west-2b", "us-west-2c"],
    "eu-west-1": ["eu-west-1a", "eu-west-1b", "eu-west-1c"],
    "eu-central-1": ["eu-central-1a", "eu-central-1b"],
    "ap-southeast-1": ["ap-southeast-1a", "ap-southeast-1b"],
    "ap-southeast-2": ["ap-southeast-2a", "ap-southeast-2b"],
    "ap-northeast-1": ["ap-northeast-1a", "ap-northeast-1c"],
    "sa-east-1": ["sa-east-1a", "sa-east-1b", "sa-east-1c"],
}


def host_tags(rng, i):
    region = rng.choice(sorted(REGIONS))
    return {
        "hostname": f"host_{i}",
        "region": region,
        "datacenter": rng.choice(REGIONS[region]),
        "rack": str(rng.randrange(100)),
        "os": rng.choice(["Ubuntu16.10", "Ubuntu16.04LTS", "Ubuntu15.10"]),
        "arch": rng.choice(["x64", "x86"]),
        "team": rng.choice(["SF", "NYC", "LON", "CHI"]),
        "service": str(rng.randrange(20)),
        "service_version": str(rng.randrange(2)),
        "service_environment": rng.choice(["production", "staging", "test"]),
    }


def step(rng, value):
    """One step of a random walk bounded to [0, 100], kept at 2 decimals."""
    value += rng.uniform(-5, 5)
    return round(min(100.0, max(0.0, value)), 2)


def tsbs_step(rng, value):
    """One step of TSBS's cpu walk: a normal step (sigma 1), clamped to
    [0, 100]; TSBS writes the value truncated to an integer."""
    return min(100.0, max(0.0, value + rng.gauss(0.0, 1.0)))


def readings(hosts, hours, decimals=2, seed=42):
    """Yields (time text, tags dict, metrics dict), time-major."""
    rng = random.Random(seed)
    tags = [host_tags(rng, i) for i in range(hosts)]
    if decimals == 0:
        values = [[rng.uniform(0, 100) for _ in METRICS] for _ in range(hosts)]
        advance, written = tsbs_step, int
    else:
        values = [[round(rng.uniform(0, 100), 2) for _ in METRICS] for _ in range(hosts)]
        advance, written = step, (lambda v: v)
    for n in range(hours * 3600 // INTERVAL_SECONDS):
        t = START + datetime.timedelta(seconds=n * INTERVAL_SECONDS)
        text = t.strftime("%Y-%m-%dT%H:%M:%SZ")
        for h in range(hosts):
            values[h] = [advance(rng, v) for v in values[h]]
            yield text, tags[h], dict(zip(METRICS, (written(v) for v in values[h])))


def directory_name(hosts, hours, decimals):
    return f"{hosts}x{hours}" + ("" if decimals == 2 else f"-d{decimals}")


def generate(hosts, hours, directory, decimals=2):
    """Writes the three files into directory (once: reused when present)."""
    done = os.path.join(directory, "complete")
    if os.path.exists(done):
        return
    os.makedirs(directory, exist_ok=True)
    compact = json.JSONEncoder(separators=(",", ":"))
    with open(os.path.join(directory, "cpu.ndjson"), "w") as ndjson, \
            open(os.path.join(directory, "cpu_jsonb.tsv"), "w") as tsv, \
            open(os.path.join(directory, "cpu_typed.csv"), "w") as csv:
        for time, tags, metrics in readings(hosts, hours, decimals):
            tags_json = compact.encode(tags)
            metrics_json = compact.encode(metrics)
            ndjson.write(f'{{"time":"{time}","tags":{tags_json},{metrics_json[1:]}\n')
            tsv.write(f"{time}\t{tags_json}\t{metrics_json}\n")
            csv.write(",".join([time] + [tags[k] for k in TAGS] +
                               [repr(metrics[m]) for m in METRICS]) + "\n")
    open(done, "w").close()
