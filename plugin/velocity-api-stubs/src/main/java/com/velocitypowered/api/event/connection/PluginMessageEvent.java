package com.velocitypowered.api.event.connection;

import com.velocitypowered.api.event.ResultedEvent;
import com.velocitypowered.api.proxy.messages.ChannelIdentifier;
import com.velocitypowered.api.proxy.messages.ChannelMessageSink;
import com.velocitypowered.api.proxy.messages.ChannelMessageSource;
import java.util.Arrays;
import java.util.Objects;

public final class PluginMessageEvent implements ResultedEvent<PluginMessageEvent.ForwardResult> {
    private final ChannelMessageSource source;
    private final ChannelMessageSink target;
    private final ChannelIdentifier identifier;
    private final byte[] data;
    private ForwardResult result;

    public PluginMessageEvent(ChannelMessageSource source, ChannelMessageSink target,
            ChannelIdentifier identifier, byte[] data) {
        this.source = Objects.requireNonNull(source, "source");
        this.target = Objects.requireNonNull(target, "target");
        this.identifier = Objects.requireNonNull(identifier, "identifier");
        this.data = Objects.requireNonNull(data, "data");
        this.result = ForwardResult.forward();
    }

    @Override
    public ForwardResult getResult() {
        return result;
    }

    @Override
    public void setResult(ForwardResult result) {
        this.result = Objects.requireNonNull(result, "result");
    }

    public ChannelMessageSource getSource() {
        return source;
    }

    public ChannelMessageSink getTarget() {
        return target;
    }

    public ChannelIdentifier getIdentifier() {
        return identifier;
    }

    public byte[] getData() {
        return Arrays.copyOf(data, data.length);
    }

    public static final class ForwardResult implements ResultedEvent.Result {
        private static final ForwardResult ALLOWED = new ForwardResult(true);
        private static final ForwardResult DENIED = new ForwardResult(false);

        private final boolean status;

        private ForwardResult(boolean b) {
            this.status = b;
        }

        @Override
        public boolean isAllowed() {
            return status;
        }

        public static ForwardResult forward() {
            return ALLOWED;
        }

        public static ForwardResult handled() {
            return DENIED;
        }
    }
}
