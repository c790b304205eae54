"""``scout eval``: the design's calibration, reproducible on any estate.

An eval file names questions with the band each belongs to and the sources that answer it
(``evalfile``); every question goes through the real answer path without being logged
(``runner``); the figures are pure functions of the per-question rows (``figures``); and two runs'
JSON documents can be set side by side (``compare``).
"""
