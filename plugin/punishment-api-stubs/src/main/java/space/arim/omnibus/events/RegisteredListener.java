package space.arim.omnibus.events;

public interface RegisteredListener {}
