package com.velocitypowered.api.event;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Subscribe {
    @Deprecated
    PostOrder order() default PostOrder.NORMAL;

    short priority() default Short.MIN_VALUE;

    boolean async() default true;
}
