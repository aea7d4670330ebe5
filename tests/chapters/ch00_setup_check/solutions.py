"""Chapter 00's exercises solved: a right solution of each (RIGHT) and the plausible
wrong ones (WRONG) that tests/exercises/test_every_exercise.py grades, with helpers the
chapter's own tests share."""



def copy_gbps(shape, dtype, seconds):
    count = 1
    for size in shape:
        count *= size
    return 2 * count * dtype.itemsize / seconds / 1e9


def median_and_iqr(samples):
    ordered = sorted(samples)

    def percentile(q):
        position = q / 100 * (len(ordered) - 1)
        low = int(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    return percentile(50), percentile(75) - percentile(25)


RIGHT = {"00.copy_gbps": copy_gbps, "00.median_and_iqr": median_and_iqr}


WRONG = {
    "00.copy_gbps": [
        lambda shape, dtype, seconds: copy_gbps(shape, dtype, seconds) / 2,  # counts one direction
        lambda shape, dtype, seconds: copy_gbps(shape, dtype, seconds) * 1e9 / 2**30,  # GiB/s
    ],
    "00.median_and_iqr": [
        lambda samples: (sum(samples) / len(samples), max(samples) - min(samples)),  # mean, range
        lambda samples: (sorted(samples)[len(samples) // 2], 0.0),  # no interpolation, no spread
    ],
}
