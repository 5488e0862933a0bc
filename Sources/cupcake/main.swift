import CupcakeCLI
import Foundation

// A closed pipe (`cupcake orders list | head`) must not kill the process mid-write.
signal(SIGPIPE, SIG_IGN)
exit(await CommandLineTool.run(Array(CommandLine.arguments.dropFirst()), console: .process))
