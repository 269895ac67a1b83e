import Foundation

/// A runner's scratch memory: zeroed float buffers allocated once (`allocateZeroed`) and freed together when the
/// owner goes, including when its initializer throws halfway.
final class ScratchBuffers {
    private var buffers: [UnsafeMutablePointer<Float>] = []

    /// `count` zeroed floats, kept until this object goes. Throws `SanadError.engine` when the memory cannot be had.
    func floats(_ count: Int) throws -> UnsafeMutablePointer<Float> {
        let p = try allocateZeroed(Float.self, count: count, for: "the runner's scratch")
        buffers.append(p)
        return p
    }

    deinit {
        for p in buffers { free(p) }
    }
}
