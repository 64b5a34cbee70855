"""Print the changed lines longer than 110 characters."""

import sys

for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if len(line.rstrip("\n")) > 110:
                print(f"{path}:{number}: longer than 110 characters")
