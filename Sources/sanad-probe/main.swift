// sanad-probe: runs one native library's small real computation in this process, so that the process asking
// (sanad, sanad serve, an app, the tests) never computes with a library that dies on this CPU. See NativeProbe.
import BLASBackend
import Foundation
import LlamaCppBackend
import SanadNative

let usage = """
    Usage: sanad-probe KIND LIBRARY [SCRATCH-DIR]

    Proves that a native library computes on this CPU, in this process: loads LIBRARY and runs a small real
    computation with it. Sanad runs this program itself (NativeProbe) before it calls an engine available, and
    caches the verdict per library file and CPU; running it by hand shows the same.

    KIND
      llama   libllama: a tiny llama model (Q4_0/Q4_1/Q8_0, written to SCRATCH-DIR) runs a 64-token prompt and
              4 generated tokens
      blas    a CBLAS library: cblas_sgemm products on 1 and several threads, checked against a plain loop

    Prints "ok …" and exits 0 when the library computed; exits 3 when it is not the expected library, 4 when it
    computed wrongly or failed; a fatal signal prints where it happened and ends the process with that signal.
    """

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("-h") || arguments.contains("--help") {
    print(usage)
    exit(0)
}
guard arguments.count == 2 || arguments.count == 3 else {
    FileHandle.standardError.write(Data("Error: expected KIND LIBRARY [SCRATCH-DIR]\n\n\(usage)\n".utf8))
    exit(64)
}
NativeProbe.installCrashReporter()
let library = arguments[1]
let scratch = URL(fileURLWithPath: arguments.count == 3 ? arguments[2] : NSTemporaryDirectory())
switch arguments[0] {
case "llama":
    exit(await LlamaProbe.run(library: library, scratch: scratch))
case "blas":
    exit(BLASProbe.run(library: library))
default:
    FileHandle.standardError.write(Data("Error: unknown KIND '\(arguments[0])' (llama, blas)\n".utf8))
    exit(64)
}
