package idpbench.spring;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * idpbench's Spring Authorization Server: the configuration of Spring's
 * demo-authorizationserver sample reduced to what the benchmark measures,
 * on PostgreSQL (docs/products/spring.md lists every deviation).
 */
@SpringBootApplication
public class Main {

	public static void main(String[] args) {
		SpringApplication.run(Main.class, args);
	}

}
