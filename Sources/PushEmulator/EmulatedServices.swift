import ArgumentParser

/// The emulator's vendor sides, one line each: the side's `push-emulator` flags (the options in its folder), which
/// register the side too (`EmulatedServiceOptions.Service`). The router asks the sides in this order, and the CLI
/// lists their flags in it. A new side is its folder, `Sources/PushEmulator/<Vendor>/`, and a line here.
public struct EmulatedServices: ParsableArguments {
    @OptionGroup var huawei: HuaweiOptions
    @OptionGroup var xiaomi: XiaomiOptions
    @OptionGroup var honor: HonorOptions
    @OptionGroup var oppo: OPPOOptions
    @OptionGroup var vivo: VivoOptions

    public init() {}
}
