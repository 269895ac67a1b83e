/// A simple bidirectional layout for one line of a form document (a subset of the Unicode Bidirectional
/// Algorithm, UAX #9, enough for labels and answers): the paragraph's direction from its first strong letter,
/// Arabic and Hebrew letters right to left, Latin letters and numbers left to right, a separator between two digits
/// (`1985-04-23`, `47.00`) part of the number, a number after Latin letters part of them (`DS-160`), spaces and punctuation taking the direction of the letters around
/// them (numbers count as right-to-left there, as in UAX #9 N1) or else the paragraph's, and the runs put in visual
/// order by reversing from the highest level down (L2). No explicit embeddings or isolates.
struct BidiLine {
    /// A stretch of the text with one direction.
    struct Run: Equatable {
        /// Indices into the line's scalars (logical order).
        var range: Range<Int>
        /// Even: left to right; odd: right to left.
        var level: Int
        var rightToLeft: Bool { level % 2 == 1 }
    }

    /// Whether the paragraph reads right to left (its first strong letter is Arabic or Hebrew).
    var rightToLeft: Bool
    /// The runs in visual order, left to right.
    var visualRuns: [Run]

    init(_ scalars: [Unicode.Scalar]) {
        var classes = scalars.map(bidiClass)
        rightToLeft = classes.first { $0 == .strongLeft || $0 == .strongRight } == .strongRight
        resolveBrackets(scalars, &classes, rightToLeft: rightToLeft)
        let levels = resolvedLevels(classes, rightToLeft: rightToLeft)
        var runs: [Run] = []
        for (i, level) in levels.enumerated() {
            if let last = runs.last, last.level == level {
                runs[runs.count - 1].range = last.range.lowerBound..<(i + 1)
            } else {
                runs.append(Run(range: i..<(i + 1), level: level))
            }
        }
        visualRuns = visualOrder(runs)
    }
}

/// The bidi classes this layout tells apart.
enum BidiClass: Equatable {
    case strongLeft, strongRight, number, separator, neutral
}

func bidiClass(_ s: Unicode.Scalar) -> BidiClass {
    let v = s.value
    if (0x30...0x39).contains(v) || (0x660...0x669).contains(v) || (0x6F0...0x6F9).contains(v) { return .number }
    if "-+.,:/".unicodeScalars.contains(s) { return .separator }
    if (0x0590...0x08FF).contains(v) || (0xFB1D...0xFDFF).contains(v) || (0xFE70...0xFEFF).contains(v) {
        return s.properties.isAlphabetic || s.properties.generalCategory == .otherLetter ? .strongRight : .neutral
    }
    return s.properties.isAlphabetic ? .strongLeft : .neutral
}

/// Paired brackets (UAX #9 N0, simplified): a pair around a letter of the paragraph's direction takes it; a pair
/// around only the opposite direction takes that one when the text before the pair is of it too (`California
/// (CA)` inside Arabic), else the paragraph's. Numbers count as right to left here, as in UAX #9.
func resolveBrackets(_ scalars: [Unicode.Scalar], _ classes: inout [BidiClass], rightToLeft: Bool) {
    let pairs: [Unicode.Scalar: Unicode.Scalar] = ["(": ")", "[": "]", "{": "}"]
    var open: [(index: Int, closer: Unicode.Scalar)] = []
    var found: [(Int, Int)] = []
    for (i, s) in scalars.enumerated() {
        if let closer = pairs[s] {
            open.append((i, closer))
        } else if let match = open.lastIndex(where: { $0.closer == s }) {
            found.append((open[match].index, i))
            open.removeSubrange(match...)
        }
    }
    func isRight(_ c: BidiClass) -> Bool? {
        switch c {
        case .strongLeft: return false
        case .strongRight, .number: return true
        default: return nil
        }
    }
    for (start, end) in found.sorted(by: { $0.0 < $1.0 }) {
        let inside = classes[(start + 1)..<end].compactMap(isRight)
        guard let any = inside.first else { continue }
        let direction: Bool
        if inside.contains(rightToLeft) {
            direction = rightToLeft
        } else {
            let before = classes[..<start].reversed().compactMap(isRight).first ?? rightToLeft
            direction = before == any ? any : rightToLeft
        }
        let strong: BidiClass = direction ? .strongRight : .strongLeft
        classes[start] = strong
        classes[end] = strong
    }
}

/// Each scalar's embedding level: 0/1 for the paragraph's direction, one higher for the opposite letters, numbers
/// left to right (2 inside a right-to-left paragraph, or after Arabic in a left-to-right one).
func resolvedLevels(_ input: [BidiClass], rightToLeft: Bool) -> [Int] {
    var classes = input
    // A single separator between two digits belongs to the number (W4).
    for i in classes.indices.dropFirst().dropLast()
    where classes[i] == .separator && classes[i - 1] == .number && classes[i + 1] == .number {
        classes[i] = .number
    }
    // A number after a Latin letter (or at the start of a left-to-right line) is part of the Latin text (W7):
    // `DS-160` stays whole inside Arabic.
    var previousLeft = !rightToLeft
    for i in classes.indices {
        switch classes[i] {
        case .strongLeft: previousLeft = true
        case .strongRight: previousLeft = false
        case .number where previousLeft: classes[i] = .strongLeft
        default: break
        }
    }
    // Neutrals (separators left over included) between two letters of one direction take it, numbers counting as
    // right to left (N1); the others take the paragraph's direction (N2).
    func strong(_ c: BidiClass) -> Bool? {
        switch c {
        case .strongLeft: return false
        case .strongRight, .number: return true
        default: return nil
        }
    }
    let paragraph = rightToLeft
    var direction = [Bool?](repeating: nil, count: classes.count)
    var i = 0
    while i < classes.count {
        if let d = strong(classes[i]) {
            direction[i] = d
            i += 1
            continue
        }
        var j = i
        while j < classes.count, strong(classes[j]) == nil { j += 1 }
        let before = i > 0 ? strong(classes[i - 1]) : paragraph
        let after = j < classes.count ? strong(classes[j]) : paragraph
        let resolved = before == after ? before : paragraph
        for k in i..<j { direction[k] = resolved }
        i = j
    }
    let base = rightToLeft ? 1 : 0
    var lastLetterRight = rightToLeft
    return classes.indices.map { k in
        switch classes[k] {
        case .strongLeft:
            lastLetterRight = false
            return rightToLeft ? 2 : 0
        case .strongRight:
            lastLetterRight = true
            return 1
        case .number: return rightToLeft || lastLetterRight ? 2 : 0
        default: return (direction[k] ?? paragraph) == rightToLeft ? base : base + 1
        }
    }
}

/// Runs in visual order: from the highest level down to the lowest odd one, each maximal sequence of runs at that
/// level or higher is reversed (UAX #9 L2; the text inside a run is ordered by its shaping direction).
func visualOrder(_ runs: [BidiLine.Run]) -> [BidiLine.Run] {
    guard let highest = runs.map(\.level).max() else { return runs }
    let lowestOdd = runs.map(\.level).filter { $0 % 2 == 1 }.min() ?? (highest + 1)
    var order = runs
    var level = highest
    while level >= lowestOdd {
        var i = 0
        while i < order.count {
            guard order[i].level >= level else {
                i += 1
                continue
            }
            var j = i
            while j < order.count, order[j].level >= level { j += 1 }
            order[i..<j].reverse()
            i = j
        }
        level -= 1
    }
    return order
}
