from logsleuth.cli.app import main

main()
