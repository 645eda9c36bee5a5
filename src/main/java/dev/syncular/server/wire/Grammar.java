package dev.syncular.server.wire;

/** Frame-order rules of one message kind (§1.2 rule 4, §1.5, §1.6), applied in wire order. */
abstract class Grammar {
    abstract void accept(Frame frame);

    abstract void end();

    static Grammar forKind(int msgKind) {
        return msgKind == FrameType.MSG_REQUEST ? new RequestGrammar() : new ResponseGrammar();
    }

    static WireException violation(String message) {
        return WireException.invalid(message);
    }
}
