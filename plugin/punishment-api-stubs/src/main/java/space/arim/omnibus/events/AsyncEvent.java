package space.arim.omnibus.events;

public interface AsyncEvent extends Event {}
