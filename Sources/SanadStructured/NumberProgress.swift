/// A number being written: its text so far (`-?(0|[1-9][0-9]*)(\.[0-9]+)?`, no exponent, at most
/// `maximumDigits` digits on each side of the point) and whether some completion can land within the bounds.
struct NumberProgress: Hashable, Sendable {
    static let maximumDigits = 15
    var text: [UInt8] = []

    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// The text after `byte`, or nil when `byte` cannot continue it (for the grammar or the bounds).
    func appending(_ byte: UInt8, _ rule: NumberRule) -> NumberProgress? {
        let negative = text.first == UInt8(ascii: "-")
        let body = negative ? text.dropFirst() : text[...]
        let dot = body.firstIndex(of: UInt8(ascii: "."))
        let integerDigits = dot.map { body[..<$0].count } ?? body.count
        if byte == UInt8(ascii: "-") {
            guard text.isEmpty else { return nil }
        } else if byte == UInt8(ascii: ".") {
            guard !rule.integer, dot == nil, integerDigits > 0 else { return nil }
        } else if Self.isDigit(byte) {
            if let dot {
                guard body.count - body.distance(from: body.startIndex, to: dot) - 1 < Self.maximumDigits else {
                    return nil
                }
            } else {
                guard integerDigits < Self.maximumDigits, body.first != UInt8(ascii: "0") else { return nil }
            }
        } else {
            return nil
        }
        let next = NumberProgress(text: text + [byte])
        return next.canReach(rule) ? next : nil
    }

    var isSyntacticallyComplete: Bool { text.last.map(Self.isDigit) ?? false }

    var value: Double { Double(String(decoding: text, as: UTF8.self)) ?? 0 }

    func isComplete(_ rule: NumberRule) -> Bool {
        guard isSyntacticallyComplete else { return false }
        let v = value
        return v >= (rule.minimum ?? -.infinity) && v <= (rule.maximum ?? .infinity)
    }

    /// Whether some completion of the text is within the bounds.
    func canReach(_ rule: NumberRule) -> Bool {
        let low = rule.minimum ?? -.infinity
        let high = rule.maximum ?? .infinity
        let negative = text.first == UInt8(ascii: "-")
        let body = Array(negative ? text.dropFirst() : text[...])
        // Magnitudes reachable, as intervals [a, b] (b excluded when `open`).
        var intervals: [(a: Double, b: Double, open: Bool)] = []
        if let dot = body.firstIndex(of: UInt8(ascii: ".")) {
            let fraction = body.count - dot - 1
            let v = Double(String(decoding: body + (fraction == 0 ? [UInt8(ascii: "0")] : []), as: UTF8.self)) ?? 0
            let step = fraction >= Self.maximumDigits ? 0 : pow10(-max(fraction, 0))
            intervals.append((v, v + step, step > 0))
        } else if body.isEmpty {
            intervals.append((0, pow10(Self.maximumDigits), true))
        } else {
            let i = Double(String(decoding: body, as: UTF8.self)) ?? 0
            let extra = body == [UInt8(ascii: "0")] ? 0 : Self.maximumDigits - body.count
            for j in 0...max(0, extra) {
                let scale = pow10(j)
                intervals.append(
                    rule.integer ? (i * scale, (i + 1) * scale - 1, false) : (i * scale, (i + 1) * scale, true))
            }
        }
        for (a, b, open) in intervals {
            if negative {
                // Values in [-b, -a] (−b excluded when open).
                if -a >= low && (open ? -b < high : -b <= high) { return true }
            } else {
                if a <= high && (open ? b > low : b >= low) { return true }
            }
        }
        return false
    }

    private func pow10(_ n: Int) -> Double {
        var r = 1.0
        if n >= 0 { for _ in 0..<n { r *= 10 } } else { for _ in 0..<(-n) { r /= 10 } }
        return r
    }
}
