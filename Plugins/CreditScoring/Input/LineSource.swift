#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The lines of a file descriptor, read 64 KiB at a time: memory stays bounded by the longest line, which may be at
/// most `maximumLineBytes`. A final line without a newline is a line; a trailing CR is dropped.
struct LineSource {
    static let maximumLineBytes = 1 << 20
    let descriptor: Int32
    let name: String
    private var buffer: [UInt8] = []
    private var position = 0
    private var finished = false
    /// The number of the line `next()` returned last (1-based).
    private(set) var lineNumber = 0

    init(descriptor: Int32, name: String) {
        self.descriptor = descriptor
        self.name = name
    }

    /// The next line without its newline, or nil at the end.
    mutating func next() throws -> [UInt8]? {
        while true {
            if let newline = buffer[position...].firstIndex(of: 10) {
                var line = Array(buffer[position..<newline])
                position = newline + 1
                lineNumber += 1
                if line.last == 13 { line.removeLast() }
                return line
            }
            if buffer.count - position > Self.maximumLineBytes {
                throw CreditError.malformedInput(
                    line: lineNumber + 1, reason: "a line longer than \(Self.maximumLineBytes) bytes in \(name)")
            }
            if finished {
                guard position < buffer.count else { return nil }
                var line = Array(buffer[position...])
                position = buffer.count
                lineNumber += 1
                if line.last == 13 { line.removeLast() }
                return line
            }
            try fill()
        }
    }

    private mutating func fill() throws {
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR { return }
            throw CreditError.io("cannot read \(name): \(String(cString: strerror(errno)))")
        }
        if count == 0 { finished = true } else { buffer.append(contentsOf: chunk[0..<count]) }
    }
}
