import Foundation
import SanadCommandLine
import SanadTestSupport
import Testing

/// The progress line: its text, when it shows, and that it shows on a terminal and not in a pipe.
@Suite("Progress line")
struct ProgressLineTests {
    final class Sink: @unchecked Sendable {  // written under the line's own lock
        var text = ""
    }

    @Test("done of total, a bar, the rate and the time left; no bar or ETA without a total")
    func text() {
        #expect(
            ProgressLine.text(label: "embedding", done: 30, total: 120, unit: "texts", elapsed: 10)
                == "embedding  30/120  [#####---------------]   25%  3.0 texts/s  ETA 30 s")
        #expect(
            ProgressLine.text(label: "analysing", done: 500, total: nil, unit: "messages", elapsed: 2)
                == "analysing  500  250.0 messages/s")
        #expect(ProgressLine.duration(59.2) == "1 min 00 s" && ProgressLine.duration(3 * 3600 + 125) == "3 h 02 min")
    }

    @Test("silent before the delay and when off; a terminal's line is redrawn in place and cleared at the end")
    func modes() {
        let sink = Sink()
        let quiet = ProgressLine("x", total: 10, unit: "u", mode: .terminal, delay: 3600) { sink.text += $0 }
        quiet.update(5)
        quiet.finish()
        let off = ProgressLine("x", total: 10, unit: "u", mode: .off, delay: 0) { sink.text += $0 }
        off.update(5)
        #expect(sink.text.isEmpty)
        let terminal = ProgressLine("x", total: 10, unit: "u", mode: .terminal, delay: 0) { sink.text += $0 }
        terminal.update(5)
        terminal.finish()
        #expect(sink.text.hasPrefix("\rx  5/10") && sink.text.hasSuffix("\r\u{1B}[K"), "\(sink.text.debugDescription)")
        let lines = Sink()
        let plain = ProgressLine("x", total: 10, unit: "u", mode: .lines, delay: 0) { lines.text += $0 }
        plain.update(5)
        plain.finish()
        #expect(lines.text.hasPrefix("x  5/10") && lines.text.hasSuffix("\n") && !lines.text.contains("\r"))
        #expect(ProgressLine.mode(requested: false, standardErrorIsTerminal: true) == .terminal)
        #expect(ProgressLine.mode(requested: true, standardErrorIsTerminal: false) == .lines)
        #expect(ProgressLine.mode(requested: false, standardErrorIsTerminal: false) == .off)
    }
}
