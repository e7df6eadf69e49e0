from logsleuth.cli import main

main()
