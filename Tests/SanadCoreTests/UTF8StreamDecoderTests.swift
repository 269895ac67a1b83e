import SanadCore
import Testing

@Suite("streaming UTF-8")
struct UTF8StreamDecoderTests {
    @Test func asciiPassesThrough() {
        var d = UTF8StreamDecoder()
        #expect(d.append(Array("Hello".utf8)) == "Hello")
        #expect(!d.hasPendingBytes)
    }

    /// "ع" is D8 B9, "😀" is F0 9F 98 80: split at every byte, nothing broken is emitted.
    @Test(arguments: ["ع", "😀", "€", "aع😀b"])
    func multiByteCharactersSplitAcrossPieces(_ text: String) {
        var d = UTF8StreamDecoder()
        var out = ""
        for byte in text.utf8 {
            let piece = d.append([byte])
            #expect(!piece.contains("\u{FFFD}"))
            out += piece
        }
        #expect(out == text)
        #expect(!d.hasPendingBytes)
    }

    @Test func heldBytesWaitForTheRest() {
        var d = UTF8StreamDecoder()
        #expect(d.append([0x41, 0xF0, 0x9F]) == "A")
        #expect(d.hasPendingBytes)
        #expect(d.append([0x98, 0x80, 0x42]) == "😀B")
    }

    @Test func invalidBytesBecomeReplacementCharacters() {
        var d = UTF8StreamDecoder()
        #expect(d.append([0x41, 0xFF]) == "A\u{FFFD}")
        #expect(d.append([0x80]) == "\u{FFFD}")
        _ = d.append([0xE2, 0x82])
        #expect(d.flush() == "\u{FFFD}")
        #expect(!d.hasPendingBytes)
    }

    @Test func bytesThatCanNeverBeValidAreNotHeld() {
        var d = UTF8StreamDecoder()
        #expect(d.append([0xD9]).isEmpty)  // first byte of "م"
        #expect(d.append([0x85, 0x61]) == "مa")
        #expect(d.append([0xF0, 0x9F]).isEmpty)  // half of an emoji
        #expect(d.flush() == "\u{FFFD}")  // an unfinished character at the end
        #expect(d.append([0xFF, 0x62]) == "\u{FFFD}b")  // a byte that starts nothing is not held
        #expect(d.append([0xE0, 0x80]) == "\u{FFFD}\u{FFFD}")  // E0 80 can never start a valid sequence
    }

    @Test func droppingAnUnfinishedCharacter() {
        var d = UTF8StreamDecoder()
        #expect(d.append([0x61, 0xE2, 0x82]) == "a")
        #expect(d.dropPending() == 2)
        #expect(!d.hasPendingBytes)
        #expect(d.append([0x62]) == "b")
    }
}
