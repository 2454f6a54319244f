from empathos.cli.main import main

main()
