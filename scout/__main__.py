from scout.cli.main import main

main()
