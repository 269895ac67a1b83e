import Foundation

/// What a child process left: its exit status, its output, and whether a signal ended it.
public struct ChildProcessResult: Sendable {
    public var status: Int32
    public var stdout: Data
    /// Empty when standard error was merged into standard output.
    public var stderr: Data
    /// True when the process ended by a signal (a crash), not by exit.
    public var crashed: Bool
}

/// Runs `executable arguments…` and waits for it: `stdin` is written and closed, both output pipes are read
/// concurrently (a full pipe never blocks the child), `environment` replaces the inherited one when given.
public func runChildProcess(
    _ executable: URL, _ arguments: [String], stdin: Data? = nil, environment: [String: String]? = nil,
    directory: URL? = nil, mergeStderr: Bool = false
) throws -> ChildProcessResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    if let environment { process.environment = environment }
    let out = Pipe()
    let err = Pipe()
    let input = Pipe()
    process.standardOutput = out
    process.standardError = mergeStderr ? out : err
    process.standardInput = input
    try process.run()
    if let stdin { input.fileHandleForWriting.write(stdin) }
    try input.fileHandleForWriting.close()
    let group = DispatchGroup()
    nonisolated(unsafe) var errData = Data()
    if !mergeStderr {
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return ChildProcessResult(
        status: process.terminationStatus, stdout: outData, stderr: errData,
        crashed: process.terminationReason == .uncaughtSignal)
}
