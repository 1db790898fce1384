"""``python -m autosig`` works like the ``autosig`` console script."""

from autosig.cli import main

if __name__ == "__main__":
    main()
