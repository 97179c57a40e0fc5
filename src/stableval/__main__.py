from stableval.cli import main

main()
