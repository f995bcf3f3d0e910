"""The names the experiment and the judge share: the two servers of a run."""
THIS = "this major"  # the major under test
REFERENCE = "11"  # the original's older major, beside it in the same run
REFERENCE_MAJOR = 11
