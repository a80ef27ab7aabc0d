#!/usr/bin/env python3
"""make-sample-day.py - write scenarios/data/sample-day.csv, a realistic day of a
clickstream's traffic as CloudWatch exports it: per-minute sums of IncomingRecords and
IncomingBytes for 2026-09-14 (UTC).

The day is synthetic but shaped like a retail site's: a night trough near 04:00, the
morning climb, a lunch bump, an evening peak near 20:30, a flash sale at 19:00 that
more than doubles the rate for a quarter of an hour, a five-minute gap at 03:12 (the
producers were redeployed: CloudWatch omits minutes without data) and minute-to-minute
noise. The output is deterministic (a fixed seed, no library beyond Python's own
Mersenne Twister), so the file in the repository can be checked by re-running:

    python3 scripts/make-sample-day.py > /tmp/day.csv && cmp /tmp/day.csv scenarios/data/sample-day.csv
"""
import math
import random
import sys

SEED = 20260914
DAY = "2026-09-14"


def base_rate(minute):
    """Records per second at `minute` of the day, before noise."""
    h = minute / 60.0
    # Diurnal: a smooth cycle with its trough near 04:00 and its top near 20:30 ...
    rate = 1150 - 850 * math.cos(2 * math.pi * (h - 4.0) / 24.0)
    rate += 300 * math.exp(-((h - 20.5) / 1.6) ** 2)   # ... the evening peak ...
    rate += 220 * math.exp(-((h - 12.6) / 0.7) ** 2)   # ... lunch ...
    rate += 160 * math.exp(-((h - 9.2) / 0.9) ** 2)    # ... the morning commute.
    if 19 * 60 <= minute < 19 * 60 + 15:               # the flash sale: a push at 19:00
        rate *= 2.3 - 0.06 * (minute - 19 * 60)
    return max(rate, 50.0)


def main():
    rng = random.Random(SEED)
    out = sys.stdout
    out.write("# A synthetic day of a clickstream (scripts/make-sample-day.py): CloudWatch\n")
    out.write("# IncomingRecords and IncomingBytes, statistic Sum, period 1 minute, UTC.\n")
    out.write("timestamp,IncomingRecords,IncomingBytes\n")
    for minute in range(24 * 60):
        if 3 * 60 + 12 <= minute < 3 * 60 + 17:
            continue  # no data: the producers were being redeployed
        u1, u2 = rng.random(), rng.random()
        z = math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)
        records = int(round(base_rate(minute) * 60.0 * math.exp(0.04 * z)))
        # Bigger events (carts, checkouts) in the evening: 950 to 1150 bytes a record.
        size = 1000 + 100 * math.sin(2 * math.pi * (minute / 1440.0 - 0.35)) + 40 * (rng.random() - 0.5)
        out.write("%sT%02d:%02d:00Z,%d,%d\n" % (DAY, minute // 60, minute % 60, records,
                                               int(round(records * size))))


if __name__ == "__main__":
    main()
