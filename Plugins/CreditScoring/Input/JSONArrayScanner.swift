/// Splits a JSON array that arrives line by line into its top-level values, without holding more than one value:
/// a million-message array is read in bounded memory. Each value comes with the line it starts on.
struct JSONArrayScanner {
    static let maximumValueBytes = 1 << 20

    enum Event: Equatable {
        case value(bytes: [UInt8], line: Int)
        case bad(line: Int, reason: String)
    }

    private enum State { case beforeArray, beforeValue, inValue, afterValue, done }
    private var state = State.beforeArray
    private var value: [UInt8] = []
    private var valueLine = 0
    private var depth = 0
    private var inString = false
    private var escaped = false

    var isDone: Bool { state == .done }

    /// Feeds one line (its newline included for the parser); returns the values and problems it completed.
    mutating func feed(_ line: [UInt8], number: Int) -> [Event] {
        var events: [Event] = []
        for byte in line + [10] {
            switch state {
            case .beforeArray:
                if isSpace(byte) { continue }
                if byte == UInt8(ascii: "[") {
                    state = .beforeValue
                } else {
                    events.append(.bad(line: number, reason: "a JSON message file is an array: expected '['"))
                    state = .done
                }
            case .beforeValue, .afterValue:
                if isSpace(byte) { continue }
                if byte == UInt8(ascii: "]") {
                    state = .done
                } else if byte == UInt8(ascii: ",") {
                    if state == .beforeValue {
                        events.append(.bad(line: number, reason: "an empty element (two commas) in the array"))
                    }
                    state = .beforeValue
                } else {
                    if state == .afterValue {
                        events.append(.bad(line: number, reason: "a missing ',' between records"))
                    }
                    state = .inValue
                    value = []
                    valueLine = number
                    depth = 0
                    inString = false
                    escaped = false
                    if let event = take(byte) { events.append(event) }
                }
            case .inValue:
                if let event = take(byte) { events.append(event) }
            case .done:
                if !isSpace(byte) {
                    events.append(.bad(line: number, reason: "text after the end of the JSON array"))
                    return events
                }
            }
        }
        return events
    }

    /// What is wrong at the end of the input, if anything.
    func finish(lastLine: Int) -> Event? {
        switch state {
        case .done: return nil
        case .beforeArray: return .bad(line: max(1, lastLine), reason: "the input is empty: expected a JSON array")
        case .inValue: return .bad(line: valueLine, reason: "a record is not closed before the end of the input")
        case .beforeValue, .afterValue: return .bad(line: lastLine, reason: "the JSON array is not closed with ']'")
        }
    }

    private mutating func take(_ byte: UInt8) -> Event? {
        if value.count >= Self.maximumValueBytes {
            state = .done
            return .bad(line: valueLine, reason: "a record longer than \(Self.maximumValueBytes) bytes")
        }
        if inString {
            value.append(byte)
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            return nil
        }
        switch byte {
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            if depth == 0 {  // the array's own ']' after a scalar
                state = .done
                return complete()
            }
            depth -= 1
        case UInt8(ascii: ","):
            if depth == 0 {
                state = .beforeValue
                return complete()
            }
        default: break
        }
        value.append(byte)
        if depth == 0, byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
            state = .afterValue
            return complete()
        }
        return nil
    }

    private mutating func complete() -> Event {
        let bytes = value
        value = []
        return .value(bytes: bytes, line: valueLine)
    }

    private func isSpace(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 || byte == 10 || byte == 13 }
}
