"""python -m cudagraphscope ARGS: the graphscope command, as `graphscope ARGS`."""
from ._cli import main

if __name__ == "__main__":
    main()
