import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The child's side of `NativeProbe`: what `sanad-probe` does around the computation itself.
extension NativeProbe {
    /// Makes a fatal signal print `probe: fatal signal N at SYMBOL (FILE)` on stderr before the process dies of it,
    /// so the parent can say where a library died. Only write(2) and dladdr run in the handler, on a buffer made
    /// here; the signal's default action then ends the process (SA_RESETHAND), so the parent still sees the signal.
    public static func installCrashReporter() {
        crashBuffer.initialize(repeating: 0, count: crashBufferSize)
        // `int dladdr(const void *, Dl_info *)`: glibc declares it only under _GNU_SOURCE, so it is looked up.
        crashDladdr = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "dladdr")  // RTLD_DEFAULT
        for signal in [SIGILL, SIGSEGV, SIGBUS, SIGFPE, SIGTRAP, SIGABRT] {
            var action = sigaction()
            #if os(Linux)
                action.__sigaction_handler.sa_sigaction = crashHandler
                action.sa_flags = SA_SIGINFO | Int32(bitPattern: UInt32(SA_RESETHAND))
            #else
                action.__sigaction_u.__sa_sigaction = crashHandler
                action.sa_flags = SA_SIGINFO | SA_RESETHAND
            #endif
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
    }

    /// Prints `loaded PATH` for every shared object mapped into this process (from /proc/self/maps), so the parent
    /// can digest the files a library pulled in (libllama loads libggml-cpu, where the kernels are).
    public static func reportLoadedFiles() {
        guard let maps = NativeProbe.readProcFile("/proc/self/maps") else { return }
        var seen = Set<String>()
        for line in maps.split(separator: "\n") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            let path = String(line[slash...])
            let name = (path as NSString).lastPathComponent
            guard name.hasSuffix(".so") || name.contains(".so."), seen.insert(path).inserted else { continue }
            print("loaded \(path)")
        }
    }
}

extension NativeProbe {
    /// The whole of a /proc file (their size reads as 0, so it is read to its end rather than by its size).
    static func readProcFile(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    }
}

private let crashBufferSize = 1024
nonisolated(unsafe) private let crashBuffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1024)
/// `Dl_info`: dli_fname, dli_fbase, dli_sname, dli_saddr.
nonisolated(unsafe) private let crashSymbol = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: 4)
nonisolated(unsafe) private var crashDladdr: UnsafeMutableRawPointer?
private typealias FnDladdr = @convention(c) (UnsafeRawPointer?, UnsafeMutableRawPointer?) -> Int32

/// Appends a C string to the crash buffer at `used`; returns the new length.
private func appendC(_ text: UnsafePointer<CChar>?, _ used: Int) -> Int {
    guard let text else { return used }
    var n = used
    var i = 0
    while n < crashBufferSize - 2, text[i] != 0 {
        crashBuffer[n] = UInt8(bitPattern: text[i])
        n += 1
        i += 1
    }
    return n
}

private let crashHandler: @convention(c) (Int32, UnsafeMutablePointer<siginfo_t>?, UnsafeMutableRawPointer?) -> Void = {
    signal, info, _ in
    var address: UnsafeMutableRawPointer?
    #if os(Linux)
        if let info { address = info.pointee._sifields._sigfault.si_addr }
    #else
        if let info { address = info.pointee.si_addr }
    #endif
    var n = appendC("probe: fatal signal ", 0)
    if signal >= 10 {
        crashBuffer[n] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: signal / 10 % 10)
        n += 1
    }
    crashBuffer[n] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: signal % 10)
    n += 1
    n = appendC(" at ", n)
    if let address, let crashDladdr,
        unsafeBitCast(crashDladdr, to: FnDladdr.self)(address, UnsafeMutableRawPointer(crashSymbol)) != 0
    {
        if let name = crashSymbol[2] { n = appendC(name, n) } else { n = appendC("an unnamed function", n) }
        n = appendC(" (", n)
        n = appendC(crashSymbol[0], n)
        n = appendC(")", n)
    } else {
        n = appendC("an unknown address", n)
    }
    crashBuffer[n] = UInt8(ascii: "\n")
    _ = write(2, crashBuffer, n + 1)
}
